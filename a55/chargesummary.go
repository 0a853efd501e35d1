package a55

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// ChargeSummary is what a journal entry of Charges.Create holds about its
// request (payonce.JournalEntry.Summary) so that SettleCreate can match
// the charge at A55 without the card: the fields A55 lists a charge with,
// and nothing of the card or the payer. Its texts are stored redacted
// (redact.JSON); DescriptionRedacted says that redaction (redact.Stored,
// the one redact.JSON gives a string) changed the description, which then
// only matches a listed one redacted alike.
//
// A summary recorded by a payonce version before the reference's wire
// form (the idempotency guide's body) has Amount, the whole charge, and
// no InstallmentValue: Legacy reports it.
type ChargeSummary struct {
	InstallmentValue    payonce.Amount   `json:"installment_value,omitzero"`
	InstallmentCount    int              `json:"installment_count,omitempty"`
	Currency            payonce.Currency `json:"currency,omitempty"`
	TypeCharge          TypeCharge       `json:"type_charge,omitempty"`
	WalletUUID          string           `json:"wallet_uuid,omitempty"`
	MerchantID          string           `json:"merchant_id,omitempty"`
	Description         string           `json:"description"`
	DescriptionRedacted bool             `json:"description_redacted,omitempty"`
	DueDate             string           `json:"due_date,omitempty"`
	// Amount is the whole amount of a summary in the guide's form
	// (Legacy); a summary of today's form has none.
	Amount payonce.Amount `json:"amount,omitzero"`
}

// Legacy reports a summary recorded in the idempotency guide's wire form
// by an earlier payonce version: an Amount and no InstallmentValue.
func (s ChargeSummary) Legacy() bool { return s.InstallmentValue.IsZero() && !s.Amount.IsZero() }

// total is what the summarised request charges in all: Amount for a
// legacy summary, else the instalment's value times the count.
func (s ChargeSummary) total() (payonce.Amount, error) {
	if s.Legacy() {
		return s.Amount, nil
	}
	return totalOf(s.InstallmentValue, max(s.InstallmentCount, 1))
}

// Summary is the request's ChargeSummary, as Charges.Create stores it in
// its journal entry (there with the client's Account filling in an empty
// wallet or merchant). Give its JSON (JournalSummary) to the Summary of
// an entry you reserve yourself (sqlitejournal and pgjournal ReserveTx)
// to settle it later without the card.
func (r *ChargeCreateRequest) Summary() ChargeSummary {
	if r == nil {
		return ChargeSummary{}
	}
	return r.summary(r.WalletUUID, r.MerchantID)
}

// summary is Summary with the wallet and merchant the request is sent
// with.
func (r *ChargeCreateRequest) summary(wallet, merchant string) ChargeSummary {
	d := redact.Stored(r.Description) // as redact.JSON stores it in the journal
	return ChargeSummary{InstallmentValue: r.InstallmentValue, InstallmentCount: r.InstallmentCount, Currency: r.Currency,
		TypeCharge: r.TypeCharge, WalletUUID: wallet, MerchantID: merchant,
		Description: d, DescriptionRedacted: d != r.Description, DueDate: r.DueDate}
}

// journalSummary is the summary of the request a chargeBody sends, made
// only when a journaled call stores it (its JSON).
type journalSummary chargeBody

// MarshalJSON writes the summary.
func (s *journalSummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.r.summary(s.wallet, s.merchant))
}

// JournalSummary is the JSON of Summary, the form of JournalEntry.Summary.
func (r *ChargeCreateRequest) JournalSummary() string {
	b, err := json.Marshal(r.Summary())
	if err != nil { // a summary holds strings and numbers only
		return ""
	}
	return string(redact.JSON(b))
}

// readSummary reads an entry's summary; ok is false when it holds none
// or not an A55 charge's.
func readSummary(e payonce.JournalEntry) (s ChargeSummary, ok bool) {
	if e.Summary == "" || json.Unmarshal([]byte(e.Summary), &s) != nil {
		return ChargeSummary{}, false
	}
	return s, !s.InstallmentValue.IsZero() || !s.Amount.IsZero()
}

// agreesWith reports whether the request r (sent with wallet and
// merchant) is the one a summary in the guide's form describes: the same
// total, currency, type, wallet, description, due date and count, each
// where the summary holds it.
func (s ChargeSummary) agreesWith(r *ChargeCreateRequest, wallet, merchant string) bool {
	if r == nil {
		return false
	}
	total, err := r.Total()
	want := r.summary(wallet, merchant)
	return err == nil && s.Amount.Cmp(total) == 0 && agree(string(s.Currency), string(want.Currency)) &&
		agree(string(s.TypeCharge), string(want.TypeCharge)) && agree(s.WalletUUID, want.WalletUUID) &&
		s.Description == want.Description && agree(s.DueDate, want.DueDate) &&
		max(s.InstallmentCount, 1) == max(want.InstallmentCount, 1)
}

// chargeMatcher tells whether a listed charge can be the one a journal
// entry's request created, by the entry's summary, or by the request
// itself when the caller gave it.
type chargeMatcher struct {
	e   payonce.JournalEntry
	sum ChargeSummary
	req *ChargeCreateRequest // nil: the summary alone
}

// newChargeMatcher reads the entry's summary and checks req, when given,
// against the entry: its fingerprint, as c sends req; for an entry in the
// guide's form (an earlier payonce version's), its summary. Errors are
// *payonce.APIError values.
func newChargeMatcher(c *Client, e payonce.JournalEntry, req *ChargeCreateRequest) (*chargeMatcher, error) {
	fail := func(kind, cause error) error {
		return &payonce.APIError{Provider: "a55", Operation: "charges.settle", Method: http.MethodGet, Path: PathChargeList,
			Kind: kind, Err: cause, Key: e.IdempotencyKey()}
	}
	m := &chargeMatcher{e: e, req: req}
	stored, hasSummary := readSummary(e)
	if req != nil {
		wallet, merchant := c.walletOr(req.WalletUUID), c.merchantOr(req.MerchantID)
		body, err := (&chargeBody{r: req, wallet: wallet, merchant: merchant}).MarshalWire()
		if err != nil {
			return nil, fail(payonce.ErrInvalidRequest, fmt.Errorf("encode request: %w", err))
		}
		switch {
		case c.core.RequestMatches(e, http.MethodPost, PathCharges, body):
		case c.matchesGuideForm(e, req, wallet):
			// Recorded in the guide's wire form by an earlier payonce
			// version: its fingerprint is one of this request's forms.
		case hasSummary && stored.Legacy() && stored.agreesWith(req, wallet, merchant):
			// Recorded in the guide's form with a fingerprint no form
			// rebuilt here matches: its summary says it is this one.
		default:
			return nil, fail(payonce.ErrIdempotencyConflict, fmt.Errorf("reference %q was recorded with another request", e.Reference))
		}
		m.sum = req.summary(wallet, merchant)
		if hasSummary && stored.Legacy() {
			m.sum = stored
		}
		return m, nil
	}
	if e.Summary == "" {
		return nil, fail(payonce.ErrInvalidRequest, fmt.Errorf("reference %q holds no request summary to match by: give SettleOptions.Request, the request it was recorded with", e.Reference))
	}
	if !hasSummary {
		return nil, fail(payonce.ErrJournal, errors.New("the entry's request summary is not an a55 charge summary"))
	}
	m.sum = stored
	if m.sum.WalletUUID == "" {
		m.sum.WalletUUID = c.account.WalletUUID
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

// matches reports whether ch can be the charge of the entry: its amount
// (the instalment's value, or the whole amount where that is all the
// answer reports) is the request's, every other field A55 reports agrees
// with the request's summary, its creation time, when reported, lies in
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
	if !m.amountMatches(ch) {
		return false
	}
	got := summaryOf(ch)
	description := got.Description == want.Description
	if m.req != nil {
		description = ch.Description == m.req.Description
	}
	return agree(string(got.Currency), string(want.Currency)) && agree(string(got.TypeCharge), string(want.TypeCharge)) &&
		agree(got.WalletUUID, want.WalletUUID) && agree(got.MerchantID, want.MerchantID) && description &&
		agree(got.DueDate, want.DueDate) &&
		(got.InstallmentCount == 0 || want.InstallmentCount == 0 || max(got.InstallmentCount, 1) == max(want.InstallmentCount, 1))
}

// amountMatches reports whether the listed charge's amount is the
// request's: its instalment value where both report one, else its whole
// amount against the request's total. A charge that reports no amount
// matches none.
func (m *chargeMatcher) amountMatches(ch *Charge) bool {
	if !m.sum.Legacy() && !ch.InstallmentValue.IsZero() {
		return ch.InstallmentValue.Cmp(m.sum.InstallmentValue) == 0
	}
	want, err := m.sum.total()
	if err != nil {
		return false
	}
	got, err := ch.Total()
	return err == nil && !got.IsZero() && got.Cmp(want) == 0
}

// summaryOf is a listed charge's fields as a summary, its description
// redacted as a stored one is.
func summaryOf(ch *Charge) ChargeSummary {
	d := redact.Stored(ch.Description)
	return ChargeSummary{InstallmentValue: ch.InstallmentValue, InstallmentCount: ch.InstallmentCount, Currency: ch.Currency,
		TypeCharge: ch.TypeCharge, WalletUUID: ch.WalletUUID, MerchantID: ch.MerchantID, Description: d,
		DescriptionRedacted: d != ch.Description, DueDate: ch.DueDate}
}
