package a55

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// ChargeSummary is what a journal entry of Charges.Create holds about its
// request (payonce.JournalEntry.Summary) so that SettleCreate can match
// the charge at A55 without the card: the fields A55 lists a charge with,
// and nothing of the card or the payer. Its texts are stored redacted
// (redact.JSON); DescriptionRedacted says that redaction (redact.Stored,
// the one redact.JSON gives a string) changed the description, which then
// only matches a listed one redacted alike.
type ChargeSummary struct {
	Amount              payonce.Amount   `json:"amount"`
	Currency            payonce.Currency `json:"currency,omitempty"`
	TypeCharge          TypeCharge       `json:"type_charge,omitempty"`
	WalletUUID          string           `json:"wallet_uuid,omitempty"`
	Description         string           `json:"description"`
	DescriptionRedacted bool             `json:"description_redacted,omitempty"`
	DueDate             string           `json:"due_date,omitempty"`
	InstallmentCount    int              `json:"installment_count,omitempty"`
}

// Summary is the request's ChargeSummary, as Charges.Create stores it in
// its journal entry. Give its JSON (JournalSummary) to the Summary of an
// entry you reserve yourself (sqlitejournal and pgjournal ReserveTx) to
// settle it later without the card.
func (r *ChargeCreateRequest) Summary() ChargeSummary {
	if r == nil {
		return ChargeSummary{}
	}
	return summaryOf(r.Amount, r.Currency, r.TypeCharge, r.WalletUUID, r.Description, r.DueDate, r.InstallmentCount)
}

// JournalSummary is the JSON of Summary, the form of JournalEntry.Summary.
func (r *ChargeCreateRequest) JournalSummary() string {
	b, err := json.Marshal(r.Summary())
	if err != nil { // a summary holds strings and numbers only
		return ""
	}
	return string(redact.JSON(b))
}

func summaryOf(amount payonce.Amount, currency payonce.Currency, typ TypeCharge, wallet, description, due string, installments int) ChargeSummary {
	d := redact.Stored(description) // as redact.JSON stores it in the journal
	return ChargeSummary{Amount: amount, Currency: currency, TypeCharge: typ, WalletUUID: wallet,
		Description: d, DescriptionRedacted: d != description, DueDate: due, InstallmentCount: installments}
}

// chargeMatcher tells whether a listed charge can be the one a journal
// entry's request created: by the entry's summary, and by the request
// itself when the caller gave it.
type chargeMatcher struct {
	e   payonce.JournalEntry
	sum ChargeSummary
	req *ChargeCreateRequest // nil: the summary alone
}

// newChargeMatcher reads the entry's summary and checks req, when given,
// against the entry's fingerprint. Errors are *payonce.APIError values.
func newChargeMatcher(view *corekit.View, e payonce.JournalEntry, req *ChargeCreateRequest) (*chargeMatcher, error) {
	fail := func(kind, cause error) error {
		return &payonce.APIError{Provider: "a55", Operation: "charges.settle", Method: http.MethodGet, Path: PathChargeList,
			Kind: kind, Err: cause, Key: e.IdempotencyKey()}
	}
	m := &chargeMatcher{e: e, req: req}
	if req != nil {
		body, err := corekit.MarshalWire(req)
		if err != nil {
			return nil, fail(payonce.ErrInvalidRequest, fmt.Errorf("encode request: %w", err))
		}
		if !view.RequestMatches(e, http.MethodPost, PathCharges, body) {
			return nil, fail(payonce.ErrIdempotencyConflict, fmt.Errorf("reference %q was recorded with another request", e.Reference))
		}
		m.sum = req.Summary()
		return m, nil
	}
	if e.Summary == "" {
		return nil, fail(payonce.ErrInvalidRequest, fmt.Errorf("reference %q holds no request summary to match by: give SettleOptions.Request, the request it was recorded with", e.Reference))
	}
	if err := json.Unmarshal([]byte(e.Summary), &m.sum); err != nil || m.sum.Amount.IsZero() {
		return nil, fail(payonce.ErrJournal, errors.New("the entry's request summary is not an a55 charge summary"))
	}
	return m, nil
}

// listDescription is the description to list charges by: "" (no filter)
// when the stored one was redacted and no longer is the original.
func (m *chargeMatcher) listDescription() string {
	if m.sum.DescriptionRedacted && m.req == nil {
		return ""
	}
	if m.req != nil {
		return m.req.Description
	}
	return m.sum.Description
}

// matches reports whether ch can be the charge of the entry: every field
// A55 reports agrees with the request (its summary, and the request's card
// and payer when given), its creation time, when reported, lies in
// [from, to] (a zero to: any time), and its key, when reported, is the
// entry's.
func (m *chargeMatcher) matches(ch *Charge, from, to time.Time) bool {
	if ch == nil || ch.UUID == "" {
		return false
	}
	if ch.IdempotencyKey != "" && ch.IdempotencyKey != m.e.Key {
		return false
	}
	if !ch.CreatedAt.IsZero() && !to.IsZero() && (ch.CreatedAt.Before(from) || ch.CreatedAt.After(to)) {
		return false
	}
	want := m.sum
	got := summaryOf(ch.Amount, ch.Currency, ch.TypeCharge, ch.WalletUUID, ch.Description, ch.DueDate, ch.InstallmentCount)
	description := got.Description == want.Description
	if m.req != nil {
		description = ch.Description == m.req.Description
	}
	if got.Amount.Cmp(want.Amount) != 0 || !agree(string(got.Currency), string(want.Currency)) ||
		!agree(string(got.TypeCharge), string(want.TypeCharge)) || !agree(got.WalletUUID, want.WalletUUID) ||
		!description || !agree(got.DueDate, want.DueDate) ||
		(got.InstallmentCount != 0 && max(got.InstallmentCount, 1) != max(want.InstallmentCount, 1)) {
		return false
	}
	req := m.req
	if req == nil {
		return true
	}
	if req.Card != nil && ch.Card != nil {
		last4 := ch.Card.Last4
		if last4 == "" {
			last4 = ch.Card.Number.Last4()
		}
		if !agree(last4, req.Card.Number.Last4()) || !agree(ch.Card.HolderName, req.Card.HolderName) ||
			!agreeSuffix(ch.Card.ExpirationMonth, req.Card.ExpirationMonth) || !agreeSuffix(ch.Card.ExpirationYear, req.Card.ExpirationYear) {
			return false
		}
	}
	if req.Payer != nil && ch.Payer != nil {
		if !agree(ch.Payer.Document, req.Payer.Document) || !strings.EqualFold(orEmpty(ch.Payer.Email, req.Payer.Email), req.Payer.Email) {
			return false
		}
	}
	return true
}
