package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
)

// maxResultBytes bounds a -result file.
const maxResultBytes = 4 << 20

// settleFlags are settle's own flags.
type settleFlags struct {
	scope, outcome, reason, result, requestID string
	lookup, recordNotExecuted                 bool
	margin                                    time.Duration
	headerID, packageID, requestFile          string
}

// settleResult is what settle prints.
type settleResult struct {
	Outcome  string    `json:"outcome"`
	Recorded bool      `json:"recorded"`
	Found    string    `json:"found,omitempty"` // the charge or card the lookup found
	Entry    entryView `json:"entry"`

	entry payonce.JournalEntry // the entry after the call
}

func cmdSettle(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string, d deps) error {
	var c common
	var f settleFlags
	fs := newFlags("settle", &c)
	fs.StringVar(&f.scope, "scope", "", "the entry's scope")
	fs.BoolVar(&f.lookup, "lookup", false, "look the operation up at the provider (credentials from the environment)")
	fs.StringVar(&f.outcome, "outcome", "", "record by hand: succeeded, failed or not-executed")
	fs.StringVar(&f.reason, "reason", "", "why, and from what, the outcome was found (required by hand)")
	fs.StringVar(&f.result, "result", "", "succeeded by hand: the provider's answer, a JSON file or - for stdin")
	fs.StringVar(&f.requestID, "request-id", "", "the provider's request ID, when known")
	fs.BoolVar(&f.recordNotExecuted, "record-not-executed", false, "lookup: record not-executed when nothing matches and the window is over")
	fs.DurationVar(&f.margin, "margin", 0, "lookup: widen the lookup window by this much on each side (default 15m)")
	fs.StringVar(&f.headerID, "header-id", "", "coinepay cards.apply lookup: the request's header_id")
	fs.StringVar(&f.packageID, "package-id", "", "coinepay cards.apply lookup: the request's package_id")
	fs.StringVar(&f.requestFile, "request", "", "a55 charges.create lookup of an entry without a request summary: the exact request, a JSON file")
	ops, err := parse(fs, args)
	if err != nil {
		return err
	}
	scope, ref, err := entryArgs(f.scope, ops)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	var st payonce.Settlement
	if !f.lookup {
		if st, err = f.settlement(d); err != nil {
			return err
		}
	}
	j, now, e, err := openEntry(ctx, c, d, "settle", scope, ref)
	if err != nil {
		return err
	}
	defer j.close()
	if e.State == payonce.JournalSucceeded {
		return fmt.Errorf("settle %q %q: already succeeded; a succeeded entry never changes", scope, ref)
	}
	if e.Settled() && !(f.lookup || st.State == payonce.JournalSucceeded) {
		return fmt.Errorf("settle %q %q: already %s; only a success found under its key may replace it", scope, ref, view(e, now).status())
	}
	var res settleResult
	if f.lookup {
		res, err = lookup(ctx, j.Store, e, f, getenv, d)
	} else {
		res, err = byHand(ctx, j.Store, e, st)
	}
	if err != nil {
		return err
	}
	res.Entry = view(res.entry, now)
	if c.json {
		return writeJSON(stdout, res)
	}
	verb := "recorded"
	if !res.Recorded {
		verb = "unchanged"
	}
	fmt.Fprintf(stdout, "%s %s %s: %s", verb, scope, ref, res.Outcome)
	if res.Found != "" {
		fmt.Fprintf(stdout, " (found %s)", res.Found)
	}
	fmt.Fprintln(stdout)
	return writeEntry(stdout, res.Entry)
}

// check refuses a flag combination that cannot settle anything, before
// the journal is opened.
func (f *settleFlags) check() error {
	lookupOnly := f.headerID != "" || f.packageID != "" || f.requestFile != "" || f.recordNotExecuted || f.margin != 0
	switch {
	case f.lookup && (f.outcome != "" || f.result != ""):
		return usageErr("-lookup and -outcome/-result exclude each other")
	case f.lookup:
		if f.margin < 0 {
			return usageErr("-margin must not be negative")
		}
		return nil
	case lookupOnly:
		return usageErr("-header-id, -package-id, -request, -record-not-executed and -margin need -lookup")
	case f.outcome == "":
		return usageErr("settle needs -lookup, or -outcome succeeded|failed|not-executed with -reason")
	case strings.TrimSpace(f.reason) == "":
		return usageErr("-reason is required to settle by hand: say why and from what the outcome was found")
	}
	switch f.outcome {
	case "succeeded":
		if f.result == "" {
			return usageErr("-outcome succeeded needs -result file.json (or - for stdin): the provider's answer")
		}
	case "failed", "not-executed", "not_executed":
		if f.result != "" {
			return usageErr("-result goes with -outcome succeeded only")
		}
	default:
		return usageErr("-outcome %q: want succeeded, failed or not-executed", f.outcome)
	}
	return nil
}

// settlement is the by-hand settlement the flags describe, checked as
// Client.Settle checks it.
func (f *settleFlags) settlement(d deps) (payonce.Settlement, error) {
	st := payonce.Settlement{Reason: f.reason, RequestID: f.requestID}
	switch f.outcome {
	case "succeeded":
		st.State = payonce.JournalSucceeded
		body, err := readResult(f.result, d)
		if err != nil {
			return st, err
		}
		st.Result, st.StatusCode = body, http.StatusOK
	case "failed":
		st.State = payonce.JournalFailed
	default:
		st.State, st.NotExecuted = payonce.JournalFailed, true
	}
	if len(st.Reason) > corekit.MaxSettleReason {
		return st, usageErr("-reason is longer than %d bytes", corekit.MaxSettleReason)
	}
	return st, nil
}

func readResult(name string, d deps) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = d.stdin
		if r == nil {
			r = os.Stdin
		}
	} else {
		fh, err := os.Open(name)
		if err != nil {
			return nil, usageErr("-result: %v", err)
		}
		defer fh.Close()
		r = fh
	}
	body, err := io.ReadAll(io.LimitReader(r, maxResultBytes+1))
	switch {
	case err != nil:
		return nil, usageErr("-result: %v", err)
	case len(body) > maxResultBytes:
		return nil, usageErr("-result is larger than %d bytes", maxResultBytes)
	case !json.Valid(body):
		return nil, usageErr("-result is not valid JSON")
	}
	return body, nil
}

// byHand records st through Client.Settle on a client of the entry's
// scope (it sends nothing to any provider).
func byHand(ctx context.Context, j journal.Store, e payonce.JournalEntry, st payonce.Settlement) (settleResult, error) {
	core, err := payonce.NewClient(payonce.WithJournal(j), payonce.WithScope(e.Scope),
		// Settle sends nothing: the base URL is never dialled.
		payonce.WithBaseURL("https://settle-by-hand.invalid"))
	if err != nil {
		return settleResult{}, fmt.Errorf("settle: %w", err)
	}
	got, err := core.Settle(ctx, e.Reference, st)
	if err != nil {
		return settleResult{}, err
	}
	return settleResult{Outcome: outcomeName(got), Recorded: true, entry: got}, nil
}

// outcomeName is the outcome a settled entry holds, as the command prints
// it: "succeeded", "failed" or "not-executed".
func outcomeName(e payonce.JournalEntry) string {
	return strings.ReplaceAll(e.SettledOutcome(), "_", "-")
}

// errScopeMismatch: the credentials in the environment are another
// merchant's or environment's than the entry's.
var errScopeMismatch = errors.New("the credentials' scope is not the entry's")

// lookup settles e by looking it up at its provider with a client built
// from the environment, whose scope must be the entry's.
func lookup(ctx context.Context, j journal.Store, e payonce.JournalEntry, f settleFlags, getenv func(string) string, d deps) (settleResult, error) {
	checkScope := func(core *payonce.Client) error {
		// The client's first journal use: entries under an earlier form
		// of its scope are refused, naming the scopes command.
		if _, err := core.CheckScopes(ctx); err != nil {
			return fmt.Errorf("settle %q: %w", e.Reference, err)
		}
		if core.Scope() != e.Scope {
			return fmt.Errorf("settle %q: %w: the environment's credentials record under %q, the entry is under %q (set %s if the application named its scope)",
				e.Reference, errScopeMismatch, core.Scope(), e.Scope, EnvScope)
		}
		return nil
	}
	switch e.Operation {
	case "cards.apply":
		if f.headerID == "" || f.packageID == "" {
			return settleResult{}, usageErr("a cards.apply lookup needs -header-id and -package-id, the request's")
		}
		if f.requestFile != "" {
			return settleResult{}, usageErr("-request is for an a55 charges.create lookup")
		}
		cc, err := coinepayFromEnv(j, getenv, d)
		if err != nil {
			return settleResult{}, err
		}
		if err := checkScope(cc.Core()); err != nil {
			return settleResult{}, err
		}
		s, err := cc.Cards.SettleApply(ctx, e.Reference, &coinepay.ApplyRequest{HeaderID: f.headerID, PackageID: f.packageID},
			&coinepay.SettleOptions{Margin: f.margin, RecordNotExecuted: f.recordNotExecuted})
		if err != nil {
			return settleResult{}, err
		}
		r := settleResult{Outcome: outcomeName(s.Entry), Recorded: s.Recorded, entry: s.Entry}
		if s.Card != nil {
			r.Found = "card " + s.Card.CardID
		}
		return r, nil
	case "charges.create":
		if f.headerID != "" || f.packageID != "" {
			return settleResult{}, usageErr("-header-id and -package-id are for a coinepay cards.apply lookup")
		}
		// Without -request the entry's summary is what the lookup
		// matches by: no card needed.
		var req *a55.ChargeCreateRequest
		if f.requestFile != "" {
			var err error
			if req, err = readChargeRequest(f.requestFile); err != nil {
				return settleResult{}, err
			}
		}
		ac, err := a55FromEnv(j, getenv, d)
		if err != nil {
			return settleResult{}, err
		}
		if err := checkScope(ac.Core()); err != nil {
			return settleResult{}, err
		}
		s, err := ac.Charges.SettleCreate(ctx, e.Reference, &a55.SettleOptions{Margin: f.margin, RecordNotExecuted: f.recordNotExecuted, Request: req})
		if err != nil {
			return settleResult{}, err
		}
		r := settleResult{Outcome: outcomeName(s.Entry), Recorded: s.Recorded, entry: s.Entry}
		if s.Charge != nil {
			r.Found = "charge " + s.Charge.UUID
		}
		return r, nil
	}
	return settleResult{}, fmt.Errorf("settle %q: %q cannot be looked up (only a55 charges.create and coinepay cards.apply can): settle it by hand with -outcome and -reason", e.Reference, e.Operation)
}

func readChargeRequest(name string) (*a55.ChargeCreateRequest, error) {
	body, err := os.ReadFile(name)
	if err != nil {
		return nil, usageErr("-request: %v", err)
	}
	var req a55.ChargeCreateRequest
	if err := json.Unmarshal(body, &req); err != nil {
		// The decoder's message may quote the file: say less.
		return nil, usageErr("-request: not a JSON charge request")
	}
	return &req, nil
}
