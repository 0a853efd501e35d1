package a55

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/redact"
)

// ErrLegacyEntry is matched (errors.Is) by a *LegacyEntryError: the
// call's reference names a journal entry, in doubt, that a payonce
// version before the reference's wire form recorded in the idempotency
// guide's form.
var ErrLegacyEntry = errors.New("a55: journal entry recorded in the idempotency guide's wire form")

// LegacyEntryError refuses to run an operation whose journal entry an
// earlier payonce version recorded in the idempotency guide's wire form
// (a nested card and payer and an amount as a string; refunds and cancels
// with the identifiers in the body, at /charge/refund/ and
// /charge/cancel/) and left in doubt. Nothing was sent: the entry's key
// is never sent again with another body (A55 would answer a key reused
// with another payload with a 409, and the operation may have run).
// Settle it by lookup (Charges.SettleCreate for a charge, or the operator
// command: payonce journal settle -lookup) or by hand
// (payonce.Client.Settle). A settled entry of the same operation is not
// refused: it answers from the journal, as before.
//
// It unwraps to the core's *payonce.APIError (errors.Is
// payonce.ErrOutcomeUnknown, with a *payonce.EarlierFormError;
// payonce.KeyOf gives the entry's key) and matches ErrLegacyEntry.
type LegacyEntryError struct {
	// Entry is the journal entry.
	Entry payonce.JournalEntry
	// Err is the core's refusal.
	Err *payonce.APIError
}

// Error says why nothing was sent and what settles the entry.
func (e *LegacyEntryError) Error() string {
	what := "settle it by lookup (Charges.SettleCreate, or payonce journal settle -lookup) or by hand (payonce.Client.Settle)"
	if e.Entry.Operation != "charges.create" {
		what = "look the charge up (Charges.Get) and settle it by hand (payonce.Client.Settle, or payonce journal settle)"
	}
	return redact.String(fmt.Sprintf("a55: %s %q was recorded by an earlier payonce version in the idempotency guide's wire form and is in doubt; "+
		"its key is never sent again with another body, so nothing was sent: %s (key %s)",
		e.Entry.Operation, e.Entry.Reference, what, e.Entry.Key))
}

// Unwrap returns the core's refusal and ErrLegacyEntry.
func (e *LegacyEntryError) Unwrap() []error { return []error{e.Err, ErrLegacyEntry} }

// legacyError is err as a *LegacyEntryError when the core refused the
// call because its entry, in doubt, holds one of the guide's forms of the
// request (payonce.EarlierFormError); any other error as it is.
func legacyError(err error) error {
	var efe *payonce.EarlierFormError
	var ae *payonce.APIError
	if !errors.As(err, &efe) || !errors.As(err, &ae) {
		return err
	}
	return &LegacyEntryError{Entry: efe.Entry, Err: ae}
}

// guideCard and guidePayer are the card and payer as the guide's body
// nests them.
type guideCard struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
	CVV             string `json:"cvv"`
}

type guidePayer struct {
	Name         string `json:"name"`
	Email        string `json:"email,omitempty"`
	Document     string `json:"document,omitempty"`
	DocumentType string `json:"document_type,omitempty"`
}

// guideCharge is a create-charge body in the guide's form, as
// encoding/json wrote the request of the versions that sent it.
type guideCharge struct {
	Amount           string           `json:"amount"`
	Currency         payonce.Currency `json:"currency"`
	TypeCharge       TypeCharge       `json:"type_charge"`
	Card             *guideCard       `json:"card,omitempty"`
	Payer            *guidePayer      `json:"payer,omitempty"`
	WalletUUID       string           `json:"wallet_uuid,omitempty"`
	Description      string           `json:"description,omitempty"`
	DueDate          string           `json:"due_date,omitempty"`
	InstallmentCount int              `json:"installment_count,omitempty"`
	Capture          *bool            `json:"capture,omitempty"`
	WebhookURL       string           `json:"webhook_url,omitempty"`
}

// guideCreateForms are the bodies an earlier payonce version may have
// sent r in, at PathCharges: the whole amount as a string, the card and
// payer nested, with and without each field that version left optional
// (the payer, its e-mail and document and the document's type, the
// wallet, description, due date, instalment count and webhook URL). The
// core compares them with an entry's fingerprint only when today's body
// does not match it, so a matching one proves the entry is this request.
func guideCreateForms(r *ChargeCreateRequest, wallet string) []payonce.EarlierForm {
	if r == nil {
		return nil
	}
	total, err := r.Total()
	if err != nil {
		return nil
	}
	base := guideCharge{Amount: total.String(), Currency: r.Currency, TypeCharge: r.TypeCharge, Capture: r.Capture}
	if c := r.Card; c != nil {
		base.Card = &guideCard{Number: string(c.Number), HolderName: c.HolderName, ExpirationMonth: c.ExpirationMonth,
			ExpirationYear: c.ExpirationYear, CVV: string(c.CVV)}
	}
	payers := []*guidePayer{nil}
	for _, email := range []string{r.Payer.Email, ""} {
		for _, doc := range []string{r.Payer.TaxID, ""} {
			types := []string{""}
			if doc != "" {
				types = append(types, "CPF", "CNPJ")
			}
			for _, dt := range types {
				payers = append(payers, &guidePayer{Name: r.Payer.Name, Email: email, Document: doc, DocumentType: dt})
			}
		}
	}
	var forms []payonce.EarlierForm
	for _, p := range payers {
		for _, w := range distinct(wallet, r.WalletUUID, "") {
			for _, d := range distinct(r.Description, "") {
				for _, due := range distinct(r.DueDate, "") {
					for _, n := range []int{r.InstallmentCount, 0} {
						for _, hook := range distinct(r.WebhookURL, "") {
							g := base
							g.Payer, g.WalletUUID, g.Description, g.DueDate, g.InstallmentCount, g.WebhookURL = p, w, d, due, n, hook
							if b, err := json.Marshal(g); err == nil {
								forms = append(forms, payonce.EarlierForm{Path: PathCharges, Body: b})
							}
						}
					}
				}
			}
		}
	}
	return forms
}

// distinct is vs without repeats, in order.
func distinct(vs ...string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		seen := false
		for _, o := range out {
			seen = seen || o == v
		}
		if !seen {
			out = append(out, v)
		}
	}
	return out
}

// guideMoveForms are the bodies an earlier payonce version sent a
// capture, refund or cancel in, at path (the guide's body forms): the
// identifiers, the amount as a decimal string and the reason in the body,
// as encoding/json wrote that version's request structs, with and
// without the wallet, which that version did not fill in.
func guideMoveForms(path, chargeUUID, walletUUID string, amount payonce.Amount, reason string) []payonce.EarlierForm {
	var forms []payonce.EarlierForm
	for _, w := range distinct(walletUUID, "") {
		v := struct {
			ChargeUUID string `json:"charge_uuid"`
			WalletUUID string `json:"wallet_uuid,omitempty"`
			Amount     string `json:"amount,omitempty"`
			Reason     string `json:"reason,omitempty"`
		}{ChargeUUID: chargeUUID, WalletUUID: w, Reason: reason}
		if !amount.IsZero() {
			v.Amount = amount.String()
		}
		if b, err := json.Marshal(v); err == nil {
			forms = append(forms, payonce.EarlierForm{Path: path, Body: b})
		}
	}
	return forms
}

// matchesGuideForm reports whether entry e was recorded with one of the
// guide's forms of r (a settle lookup's check of SettleOptions.Request).
func (c *Client) matchesGuideForm(e payonce.JournalEntry, r *ChargeCreateRequest, wallet string) bool {
	for _, f := range guideCreateForms(r, wallet) {
		if c.core.RequestMatches(e, http.MethodPost, f.Path, f.Body) {
			return true
		}
	}
	return false
}
