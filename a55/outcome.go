package a55

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce"
)

// The codes whose answer leaves a create's outcome unknown (kind
// payonce.ErrOutcomeUnknown): the charge is looked up before anything is
// sent again under the key.
const (
	codeTimeout   = "TIMEOUT"
	codeDuplicate = "DUPLICATE_REQUEST"
	// codeLostAnswer names, in a settle's reason, a create whose answer
	// was lost and whose charge a lookup found before a re-send.
	codeLostAnswer = "a lost answer"
)

// lookUpUnknown settles a Charges.Create whose outcome is unknown by
// reading the charge, never by sending it again: err is the create's
// error, meta its meta. It acts on an answer of this run (TIMEOUT, or
// DUPLICATE_REQUEST: the key was used before) and on a journal entry
// marked to be looked up first (payonce.JournalEntry.LookUpFirst: such
// an answer of an earlier run; when that answer named no charge, the
// wallet's list is searched as before a resend, lostCreate). When the
// charge's UUID is known (the answer named it) it Gets the charge (one a
// list found is taken as listed), and by its status:
//
//   - a failed status (error, declined): the create failed, a *ChargeError
//     of kind ErrCardDeclined or ErrChargeFailed with the charge;
//   - another documented status but issued and pending: the create
//     succeeded, the charge is its answer (Meta.Replayed for a
//     DUPLICATE_REQUEST: the original charge);
//   - issued, pending, an undocumented status, or a lookup that failed:
//     still in doubt, payonce.ErrOutcomeUnknown with the key and, through
//     ChargeFromError, the charge.
//
// With a journal and a reference, a success or failure is recorded
// (payonce.Client.Settle) and later calls answer from the journal; an
// entry still in doubt stays pending and marked, and the next call with
// the reference looks again. Without the charge's UUID nothing is looked
// up here: the error stays ErrOutcomeUnknown (settle a journal entry with
// SettleCreate, which lists the wallet's charges). Any other error is
// returned as it is.
func (s *ChargesService) lookUpUnknown(ctx context.Context, req *ChargeCreateRequest, meta ResponseMeta, err error, lost *Charge) (*Charge, error) {
	var ae *payonce.APIError
	if !errors.As(err, &ae) || !errors.Is(ae.Kind, payonce.ErrOutcomeUnknown) {
		return nil, err
	}
	code := ae.Code
	var known *Charge
	if cf := (*chargeFailure)(nil); errors.As(err, &cf) {
		known = cf.charge
	}
	e, fromJournal := payonce.JournalEntryOf(err)
	switch {
	case lost != nil:
		code, known = codeLostAnswer, lost
	case fromJournal:
		if !e.LookUpFirst() {
			return nil, err // in doubt for another reason (a key too old): SettleCreate's
		}
		code, known = e.ErrorCode, recordedCharge(e)
		if known == nil && req != nil {
			// The answer named no charge (or was lost): the wallet's list
			// may find it, by the entry's key and the request.
			l := &lostCreate{s: s, req: req, wallet: s.c.walletOr(req.WalletUUID), merchant: s.c.merchantOr(req.MerchantID)}
			if ch, lerr := l.lookUp(ctx, payonce.KeyOf(err), e.Reference); lerr == nil && ch != nil {
				known, lost = ch, ch
			}
		}
	}
	switch {
	case fromJournal && (known == nil || known.UUID == ""):
		return nil, err // its text says to settle it
	case known == nil || known.UUID == "":
		d := *ae
		d.Err = &doubtError{err: ae.Err, why: "the answer names no charge: nothing is sent again under the key before the charge is looked up " +
			"(Charges.SettleCreate for a journaled call, else Charges.List by wallet and description)"}
		return nil, &d
	}
	wallet := known.WalletUUID
	if wallet == "" && req != nil {
		wallet = s.c.walletOr(req.WalletUUID)
	}
	got := lost // just listed: not read again, a read that could fail
	if got == nil {
		var gerr error
		if got, gerr = s.Get(ctx, known.UUID, wallet); gerr != nil {
			return nil, stillInDoubt(ae, known, meta, "reading it failed: "+lookupFailure(gerr))
		}
	}
	replayed := strings.EqualFold(strings.TrimSpace(code), codeDuplicate)
	if req != nil {
		// The charge read must be this request's: every field A55 reports
		// agrees with it (and the key, where a server reports one).
		m := &chargeMatcher{e: payonce.JournalEntry{Key: ae.Key.String()}, sum: req.summary(s.c.walletOr(req.WalletUUID), s.c.merchantOr(req.MerchantID)), req: req}
		if !m.matches(got, time.Time{}, time.Time{}) {
			if replayed { // the key's first request was another one
				e := *ae
				e.Kind = payonce.ErrIdempotencyConflict
				e.Err = fmt.Errorf("the key's original charge %s was created by another request", got.UUID)
				return nil, &e
			}
			return nil, stillInDoubt(ae, known, meta, "charge "+got.UUID+" read does not match the request")
		}
	}
	st, settled := settlementOf(code, got)
	if settled && meta.Reference != "" && s.c.view.Journal != nil {
		// A settle the journal refuses (another run or a Settle got there
		// first, the journal failed) leaves the entry marked: the next
		// call with the reference looks the charge up again, and finds
		// the same.
		st.LeaseOwner = meta.LeaseOwner
		_, _ = s.c.core.Settle(ctx, meta.Reference, st)
	}
	switch {
	case settled && st.State == payonce.JournalFailed:
		return nil, lookedUpFailure(ae, got, meta, replayed)
	case settled:
		got.Meta = lookedUpMeta(meta, got.Meta, replayed)
		return got, nil
	}
	return nil, stillInDoubt(ae, got, meta, "read again, it is in status "+strings.TrimSpace(string(got.Status)))
}

// settlementOf is what a lookup that found ch settles a create in doubt
// with (after the answer code): failed for a failed status, succeeded
// with the charge as its answer for another documented status but issued
// and pending; settled is false when ch's status does not settle it.
func settlementOf(code string, ch *Charge) (st payonce.Settlement, settled bool) {
	if code == "" {
		code = "an unknown outcome"
	}
	st.Reason = fmt.Sprintf("a55 lookup after %s: charge %s in status %s", code, ch.UUID, strings.TrimSpace(string(ch.Status)))
	switch {
	case ch.Status.Failed():
		st.State = payonce.JournalFailed
	case ch.Status.settled():
		res, err := json.Marshal(ch)
		if err != nil {
			return st, false
		}
		st.State, st.Result, st.StatusCode = payonce.JournalSucceeded, res, http.StatusOK
	default:
		return st, false
	}
	return st, true
}

// settleRecorded is SettleCreate's lookup of an entry marked to be
// looked up first whose recorded answer named its charge (known): the
// charge is read, not searched for, and must match the entry's request
// (m). It returns the settlement and the
// charge found, or the kind and cause of a lookup that cannot settle it
// (the charge still issued or pending: payonce.ErrOutcomeUnknown).
func (s *ChargesService) settleRecorded(ctx context.Context, e payonce.JournalEntry, known *Charge, m *chargeMatcher) (payonce.Settlement, *Charge, error, error) {
	got, err := s.Get(ctx, known.UUID, known.WalletUUID)
	if err != nil {
		return payonce.Settlement{}, nil, payonce.CallKind(err), fmt.Errorf("get charge %s: %w", known.UUID, err)
	}
	if !m.matches(got, time.Time{}, time.Time{}) {
		return payonce.Settlement{}, nil, payonce.ErrLookupAmbiguous, fmt.Errorf("charge %s, named by the entry's answer, does not match its request", got.UUID)
	}
	st, settled := settlementOf(e.ErrorCode, got)
	if !settled {
		return st, got, payonce.ErrOutcomeUnknown, fmt.Errorf("charge %s is still in status %s", got.UUID, strings.TrimSpace(string(got.Status)))
	}
	return st, got, nil, nil
}

// recordedCharge is the charge an entry's recorded answer names (its
// charge_uuid and wallet_uuid, in either error shape or a 2xx), the
// wallet taken from the entry's request summary when the answer has
// none; nil when it names none.
func recordedCharge(e payonce.JournalEntry) *Charge {
	var v struct {
		ChargeUUID string `json:"charge_uuid"`
		WalletUUID string `json:"wallet_uuid"`
	}
	if len(e.Result) == 0 || json.Unmarshal(e.Result, &v) != nil || v.ChargeUUID == "" {
		return nil
	}
	if v.WalletUUID == "" {
		var sum ChargeSummary
		if json.Unmarshal([]byte(e.Summary), &sum) == nil {
			v.WalletUUID = sum.WalletUUID
		}
	}
	return &Charge{UUID: v.ChargeUUID, WalletUUID: v.WalletUUID}
}

// lookedUpMeta is the meta of a create settled by a lookup: the create's
// (key, attempts, reference) with the lookup's answer (status, headers,
// request ID, rate limit); Replayed for the original charge of a
// DUPLICATE_REQUEST.
func lookedUpMeta(create, lookup ResponseMeta, replayed bool) ResponseMeta {
	m := create
	m.StatusCode, m.Header, m.RequestID, m.RateLimit = lookup.StatusCode, lookup.Header, lookup.RequestID, lookup.RateLimit
	m.Replayed = m.Replayed || replayed
	return m
}

// lookedUpFailure is the error of a create whose charge a lookup found
// in a failed status: ae (the create's error, its key and attempts)
// with the failure's kind, the charge's codes and the charge.
func lookedUpFailure(ae *payonce.APIError, got *Charge, meta ResponseMeta, replayed bool) error {
	e := *ae
	e.Code, e.Message, e.Details = "", "", nil
	fillFromMessages(&e, got.Messages)
	e.Details = nil // the charge's messages, already its Message
	e.Kind = chargeFailureKind(0, e.Code, got.Status)
	e.Err = &chargeFailure{charge: got}
	got.Meta = lookedUpMeta(meta, got.Meta, replayed)
	return &ChargeError{Charge: got, Err: &e}
}

// stillInDoubt is the error of a create the lookup could not settle:
// ae's kind (payonce.ErrOutcomeUnknown) and key, why in its text, and the
// charge as far as it is known (ChargeFromError).
func stillInDoubt(ae *payonce.APIError, ch *Charge, meta ResponseMeta, why string) error {
	e := *ae
	e.Err = &doubtError{err: ae.Err, charge: ch.UUID, why: why}
	ch.Meta = meta
	return &ChargeError{Charge: ch, Err: &e}
}

// doubtError is the Err of a create still in doubt after a lookup: what
// the answer or the journal said (err), the charge read (its UUID) and
// why that did not settle it. It unwraps to err alone: the lookup's own
// failure (a transport error, say) must not make the create look
// resumable.
type doubtError struct {
	err    error
	charge string
	why    string
}

func (e *doubtError) Error() string {
	var cf *chargeFailure
	switch {
	case e.err == nil:
		return "charge " + e.charge + ": " + e.why
	case errors.As(e.err, &cf): // the answer's text names the charge
		return e.err.Error() + "; " + e.why
	}
	return e.err.Error() + "; charge " + e.charge + ": " + e.why
}

func (e *doubtError) Unwrap() error { return e.err }

// lookupFailure names a lookup's failure by its kind and status, never
// by its whole text (which repeats the operation and names no key).
func lookupFailure(err error) string {
	var ae *payonce.APIError
	if !errors.As(err, &ae) || ae.Kind == nil {
		return "error"
	}
	if ae.StatusCode != 0 {
		return fmt.Sprintf("%s (HTTP %d)", ae.Kind.Error(), ae.StatusCode)
	}
	return ae.Kind.Error()
}
