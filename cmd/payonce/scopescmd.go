package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"unicode"

	"github.com/payonce/payonce"
)

// scopesResult is what scopes prints: the scopes after the move, and the
// move when one was asked for.
type scopesResult struct {
	Moved  *moveResult          `json:"moved,omitempty"`
	Scopes []payonce.ScopeCount `json:"scopes"`
}

type moveResult struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Entries int64  `json:"entries"`
}

// cmdScopes lists the scopes a journal holds with their entry counts, or
// moves one scope's entries into another (-from, -to): a scope an earlier
// payonce gave a credential into the one today's client records under.
func cmdScopes(ctx context.Context, args []string, stdout io.Writer, d deps) error {
	var c common
	var from, to string
	fs := newFlags("scopes", &c)
	fs.StringVar(&from, "from", "", "move every entry of this scope (with -to)")
	fs.StringVar(&to, "to", "", "into this scope: the one the application's client records under")
	ops, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(ops) > 0:
		return usageErr("scopes takes no operands, got %q", ops[0])
	case (from == "") != (to == ""):
		return usageErr("-from and -to go together: the scope to move and the scope to move it into")
	case from != "" && from == to:
		return usageErr("-from and -to are the same scope")
	}
	j, err := openJournal(ctx, c)
	if err != nil {
		return err
	}
	defer j.close()
	u, ok := j.Store.(payonce.JournalUpgrader)
	if !ok {
		return fmt.Errorf("scopes: the journal cannot list or move scopes")
	}
	var res scopesResult
	if from != "" {
		n, err := u.MoveScope(ctx, from, to)
		if err != nil {
			return fmt.Errorf("scopes: move %q to %q: %w (nothing moved)", from, to, err)
		}
		res.Moved = &moveResult{From: from, To: to, Entries: n}
	}
	if res.Scopes, err = u.Scopes(ctx); err != nil {
		return fmt.Errorf("scopes: %w", err)
	}
	if res.Scopes == nil {
		res.Scopes = []payonce.ScopeCount{}
	}
	if c.json {
		return writeJSON(stdout, res)
	}
	if res.Moved != nil {
		fmt.Fprintf(stdout, "moved %d entries from scope %s to %s\n", res.Moved.Entries, shown(from), shown(to))
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tPENDING\tSETTLED")
	for _, n := range res.Scopes {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", shown(n.Scope), n.Pending, n.Settled)
	}
	return tw.Flush()
}

// shown is a scope as a terminal may print it: as it is when every rune
// is a printable one, else quoted with Go's escapes, so that no scope can
// move the cursor, ring or reorder the text around it.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.Is(unicode.Bidi_Control, r) || r == '"' {
			return strconv.Quote(s)
		}
	}
	return s
}
