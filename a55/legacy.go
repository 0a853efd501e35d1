package a55

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// ErrLegacyEntry is matched (errors.Is) by a *LegacyEntryError: the
// call's reference names a journal entry that a payonce version before
// the reference's wire form recorded in the idempotency guide's form.
var ErrLegacyEntry = errors.New("a55: journal entry recorded in the idempotency guide's wire form")

// LegacyEntryError refuses to run an operation whose journal entry an
// earlier payonce version recorded in the idempotency guide's wire form
// (a nested card and payer and an amount as a string; refunds and cancels
// with the identifiers in the body, at /charge/refund/ and
// /charge/cancel/). Nothing was sent: the entry's key is never sent again
// with another body, since A55 would answer a key reused with another
// payload with a 409, or worse, and the operation may have run. An entry
// in doubt is settled by lookup (Charges.SettleCreate for a charge, or
// the operator command: payonce journal settle -lookup) or by hand
// (payonce.Client.Settle).
//
// It unwraps to the core's *payonce.APIError (errors.Is
// payonce.ErrIdempotencyConflict; payonce.KeyOf gives the entry's key)
// and matches ErrLegacyEntry. A settled entry of the same operation is
// not refused: its recorded outcome is answered, as before.
type LegacyEntryError struct {
	// Entry is the journal entry as read after the refusal.
	Entry payonce.JournalEntry
	// Err is the core's refusal of the entry's key for this body.
	Err *payonce.APIError
}

// Error says why nothing was sent and what settles the entry.
func (e *LegacyEntryError) Error() string {
	what := "it is in doubt: settle it by lookup (Charges.SettleCreate, or payonce journal settle -lookup) or by hand (payonce.Client.Settle)"
	switch {
	case e.Entry.Settled() && e.Entry.Operation != "charges.create":
		what = "it is settled (" + string(e.Entry.State) + ") for another request"
	case e.Entry.Settled():
		what = "it is settled (" + string(e.Entry.State) + ")"
	case e.Entry.Operation != "charges.create":
		what = "it is in doubt: look the charge up (Charges.Get) and settle it by hand (payonce.Client.Settle, or payonce journal settle)"
	}
	return redact.String(fmt.Sprintf("a55: %s %q was recorded by an earlier payonce version in the idempotency guide's wire form; "+
		"its key is never sent again with another body, so nothing was sent: %s (key %s)",
		e.Entry.Operation, e.Entry.Reference, what, e.Entry.Key))
}

// Unwrap returns the core's refusal and ErrLegacyEntry.
func (e *LegacyEntryError) Unwrap() []error { return []error{e.Err, ErrLegacyEntry} }

// conflictEntry reads the journal entry of a call the core refused,
// nothing sent, because its reference was recorded with another request:
// ok is false for any other error.
func (c *Client) conflictEntry(ctx context.Context, meta ResponseMeta, err error) (e payonce.JournalEntry, apiErr *payonce.APIError, ok bool) {
	if meta.Reference == "" || !errors.As(err, &apiErr) || apiErr.Kind != payonce.ErrIdempotencyConflict ||
		apiErr.StatusCode != 0 || apiErr.Attempts != 0 {
		return payonce.JournalEntry{}, nil, false
	}
	j, _ := c.view.Journal.(payonce.Journal)
	if j == nil {
		return payonce.JournalEntry{}, nil, false
	}
	e, gerr := j.Get(ctx, c.view.Scope, meta.Reference)
	if gerr != nil {
		return payonce.JournalEntry{}, nil, false
	}
	return e, apiErr, true
}

// legacyCreate answers a Charges.Create the core refused (err) when the
// entry of its reference is in the guide's form and its summary says it
// is this request: a succeeded entry's charge from the journal, as
// before; else a *LegacyEntryError. Any other error is returned as it is.
func (c *Client) legacyCreate(ctx context.Context, meta ResponseMeta, err error, req *ChargeCreateRequest, body *chargeBody) (*Charge, error) {
	e, apiErr, ok := c.conflictEntry(ctx, meta, err)
	if !ok || e.Operation != "charges.create" {
		return nil, err
	}
	sum, hasSummary := readSummary(e)
	if !hasSummary || !sum.Legacy() || !sum.agreesWith(req, body.wallet, body.merchant) {
		return nil, err
	}
	if e.State == payonce.JournalSucceeded {
		if ch, ok := legacyResult(e, meta); ok {
			return ch, nil
		}
	}
	return nil, &LegacyEntryError{Entry: e, Err: apiErr}
}

// legacyMove is legacyCreate for a capture, refund or cancel: the entry is
// this operation's in the guide's form when its fingerprint is that of
// one of guide's bodies at guide's path.
func (c *Client) legacyMove(ctx context.Context, meta ResponseMeta, err error, guide guideForm) (*Charge, error) {
	e, apiErr, ok := c.conflictEntry(ctx, meta, err)
	if !ok || guide.path == "" {
		return nil, err
	}
	same := false
	for _, b := range guide.bodies {
		if c.view.RequestMatches(e, http.MethodPost, guide.path, b) {
			same = true
			break
		}
	}
	if !same {
		return nil, err
	}
	if e.State == payonce.JournalSucceeded {
		if ch, ok := legacyResult(e, meta); ok {
			return ch, nil
		}
	}
	return nil, &LegacyEntryError{Entry: e, Err: apiErr}
}

// legacyResult is the charge a succeeded entry recorded, answered from
// the journal (its stored answer, in whatever form an earlier version
// stored it, still reads as a Charge).
func legacyResult(e payonce.JournalEntry, meta ResponseMeta) (*Charge, bool) {
	ch := new(Charge)
	if json.Unmarshal(e.Result, ch) != nil || ch.UUID == "" {
		return nil, false
	}
	m := meta
	m.Key, m.FromJournal, m.StatusCode, m.RequestID, m.Replayed, m.Attempts = e.IdempotencyKey(), true, e.StatusCode, e.RequestID, e.Replayed, 0
	ch.Meta = m
	return ch, true
}

// guideForm is how an earlier payonce version sent a capture, refund or
// cancel: its path and the bodies it may have sent (with and without the
// wallet, which that version did not fill in).
type guideForm struct {
	path   string
	bodies [][]byte
}

// guideMove is the guide's form of a capture, refund or cancel: the
// identifiers, the amount as a decimal string and the reason in the body,
// as encoding/json wrote that version's request structs.
func guideMove(path, chargeUUID, walletUUID string, amount payonce.Amount, hasAmount bool, reason string, hasReason bool) guideForm {
	g := guideForm{path: path}
	for _, w := range []string{walletUUID, ""} {
		v := struct {
			ChargeUUID string `json:"charge_uuid"`
			WalletUUID string `json:"wallet_uuid,omitempty"`
			Amount     string `json:"amount,omitempty"`
			Reason     string `json:"reason,omitempty"`
		}{ChargeUUID: chargeUUID, WalletUUID: w, Reason: reason}
		if hasAmount && !amount.IsZero() {
			v.Amount = amount.String()
		}
		if !hasReason {
			v.Reason = ""
		}
		b, err := json.Marshal(v)
		if err == nil {
			g.bodies = append(g.bodies, b)
		}
		if w == "" {
			break
		}
	}
	return g
}
