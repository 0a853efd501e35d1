package main

import (
	"regexp"
	"strings"

	"github.com/payonce/payonce/redact"
)

// operatorTerms are what the library's errors tell a program to use (a
// Go option, field or method) and what the command's operator uses
// instead: its own flags and environment. errorText applies them in
// order; TestEveryGoNameInAnErrorHasAnOperatorTerm holds every such name
// the command's packages can put in an error to one of them, or to
// notOperatorFacing.
var operatorTerms = []struct {
	goName *regexp.Regexp
	say    string
}{
	// The command maps scopes with its own subcommand, which the same
	// error names first.
	{regexp.MustCompile(`,? or give the client payonce\.WithLegacyScopes\("(?:[^"\\]|\\.)*"\)`), ""},
	{regexp.MustCompile(`payonce\.WithLegacyScopes`), "payonce journal scopes -from -to"},
	{regexp.MustCompile(`SettleOptions\.Request`), "-request charge.json"},
	{regexp.MustCompile(`SettleOptions\.RecordNotExecuted`), "-record-not-executed"},
	{regexp.MustCompile(`SettleOptions\.Margin`), "-margin"},
	{regexp.MustCompile(`settle it with payonce\.Client\.Settle`), "settle it by hand (-outcome, -reason)"},
	{regexp.MustCompile(`payonce\.Client\.Settle`), "a settle by hand (-outcome, -reason)"},
	{regexp.MustCompile(`(?:pass |give )?payonce\.WithScope`), "set " + EnvScope + " to the application's scope"},
	{regexp.MustCompile(`payonce\.WithJournal`), "-journal"},
	// The command's A55 client takes its wallet from the environment.
	{regexp.MustCompile(`\(WithAccount\)`), "(" + EnvA55WalletUUID + ")"},
	// The command reaches a provider over https only (or plain http on
	// loopback).
	{regexp.MustCompile(`,? or WithInsecureHTTP`), ""},
}

// notOperatorFacing are the Go names the command's packages put in error
// texts that no command path can produce, each with why.
var notOperatorFacing = map[string]string{
	"WithKey":                 "keys of a Do call: the command sends no operation",
	"WithExplicitKeys":        "the command sends no operation",
	"WithReference":           "the command sends no operation",
	"WithJournal":             "the command always gives its clients the journal",
	"WithCallTimeout":         "the command sets no call timeout",
	"WithLegacyScopes":        "the command's clients take none (payonce journal scopes moves scopes)",
	"payonce.JournalUpgrader": "every journal the command opens is one",
	"payonce.JournalFinder":   "every journal the command opens is one (finder.go passes it on)",
	"payonce.Key":             "a Key's GoString, not an error",
	"payonce.Meta":            "a Meta's GoString, not an error",
	"payonce.Card":            "a Card's GoString, not an error",
}

// errorText is err as the command prints it after its own "payonce: ":
// redacted, without the "payonce: " every error of the library starts
// with (the command says it once), and naming the command's flags where
// the library names a program's Go options.
func errorText(err error) string {
	s := redact.String(err.Error())
	s = strings.TrimPrefix(s, "payonce: ")
	s = strings.ReplaceAll(s, ": payonce: ", ": ")
	return inOperatorTerms(s)
}

// inOperatorTerms is s with operatorTerms applied.
func inOperatorTerms(s string) string {
	for _, t := range operatorTerms {
		s = t.goName.ReplaceAllLiteralString(s, t.say)
	}
	return s
}
