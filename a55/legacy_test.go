package a55

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// The idempotency guide's wire form of refCharge, as payonce versions
// before the reference's form sent it (json.Marshal of that version's
// request: nested card and payer, the amount as a string), its journal
// summary, and a succeeded answer of that time.
const (
	guideBody = `{"amount":"100.00","currency":"BRL","type_charge":"credit_card",` +
		`"card":{"number":"4111111111111111","holder_name":"JOAO SILVA","expiration_month":"12","expiration_year":"2030","cvv":"123"},` +
		`"payer":{"name":"João Silva","email":"joao.silva@example.com","document":"39999999999","document_type":"CPF"},` +
		`"wallet_uuid":"00000000-0000-0000-0000-000000000000","description":"Order 42","due_date":"2026-12-31","installment_count":1}`
	guideSummary = `{"amount":"100.00","currency":"BRL","type_charge":"credit_card","wallet_uuid":"00000000-0000-0000-0000-000000000000",` +
		`"description":"Order 42","due_date":"2026-12-31","installment_count":1}`
	guideAnswer = `{"charge_uuid":"ch_old","wallet_uuid":"00000000-0000-0000-0000-000000000000","status":"confirmed","amount":"100.00",` +
		`"captured_amount":"100.00","refunded_amount":"0.00","currency":"BRL","type_charge":"credit_card",` +
		`"card":{"last4":"1111","holder_name":"JOAO SILVA","expiration_month":"12","expiration_year":"2030"},` +
		`"payer":{"name":"João Silva"},"message":[],"created_at":"2026-11-29T11:00:00Z"}`
)

// reserveGuideEntry records in j the entry an earlier payonce version
// reserved for ref: its operation, path, guide-form body (fingerprinted
// as c fingerprints, keyed by the client secret) and summary, sent; with
// result, succeeded.
func reserveGuideEntry(t *testing.T, c *Client, j payonce.Journal, ref, op, path, body, summary, result string) payonce.JournalEntry {
	t.Helper()
	now := c.view.Now()
	e := payonce.JournalEntry{Scope: c.core.Scope(), Reference: ref, Operation: op, Method: http.MethodPost, Path: path,
		Key: "legacy-key-" + strings.ReplaceAll(ref, "/", "-"), KeyCreated: now.Add(-time.Hour), Summary: summary,
		Fingerprint: c.core.Fingerprint(http.MethodPost, path, []byte(body)),
		State:       payonce.JournalPending, Sent: true, Attempts: 1, CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)}
	_, created, err := j.Reserve(context.Background(), e)
	require.NoError(t, err)
	require.True(t, created)
	if result != "" {
		_, err = c.core.Settle(context.Background(), ref, payonce.Settlement{State: payonce.JournalSucceeded, Result: []byte(result), StatusCode: 200, Reason: "recorded by the earlier version"})
		require.NoError(t, err)
	}
	got, err := j.Get(context.Background(), c.core.Scope(), ref)
	require.NoError(t, err)
	return got
}

// An entry the earlier wire form reserved and left in doubt is never sent
// again with the reference's body: the call is refused with a typed error
// that says why and gives back the entry's key, nothing sent; the entry
// is then settled by lookup from its summary.
func TestLegacyPendingChargeIsRefusedNotResent(t *testing.T) {
	j := journal.NewMemory()
	u := setup(t, payonce.WithJournal(j))
	hits := counted(u)
	e := reserveGuideEntry(t, u.client, j, "order-42/charge", "charges.create", PathCharges, guideBody, guideSummary, "")

	_, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithReference("order-42/charge"))
	require.Error(t, err)
	var le *LegacyEntryError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.ErrorIs(t, err, ErrLegacyEntry)
	assert.ErrorIs(t, err, payonce.ErrOutcomeUnknown, "in doubt: settled by lookup")
	assert.Equal(t, e.Key, payonce.KeyOf(err).String())
	assert.False(t, payonce.IsResumable(err), "never sent again under its key")
	assert.Contains(t, err.Error(), "idempotency guide's wire form")
	assert.Contains(t, err.Error(), "settle it by lookup")
	assert.NotContains(t, err.Error(), "4111111111111111")
	assert.Zero(t, hits.Load(), "nothing sent")

	// Another request under the same reference is a plain conflict: the
	// summary says it is not this charge.
	other := refCharge()
	other.InstallmentValue = mustAmount("99.00")
	_, err = u.client.Charges.Create(context.Background(), other, payonce.WithReference("order-42/charge"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.NotErrorIs(t, err, ErrLegacyEntry)
	assert.Zero(t, hits.Load())

	// The lookup settles it from the guide-form summary: the whole amount
	// against the listed charge's total.
	u.mux.HandleFunc("GET "+PathChargeList, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "00000000-0000-0000-0000-000000000000", r.URL.Query().Get("wallet_uuid"))
		writeJSON(w, 200, `{"charges":[{"charge_uuid":"ch_found","status":"confirmed","installment_value":100,"installment_count":1,`+
			`"currency":"BRL","type_charge":"credit_card","wallet_uuid":"00000000-0000-0000-0000-000000000000","description":"Order 42",`+
			`"created_at":"`+guideTime.Add(-time.Hour).Format(time.RFC3339)+`"},`+
			`{"charge_uuid":"ch_other","status":"confirmed","installment_value":50,"installment_count":1,"currency":"BRL",`+
			`"description":"Order 42","created_at":"`+guideTime.Add(-time.Hour).Format(time.RFC3339)+`"}],"page":1,"limit":100,"total":2}`)
	})
	s, err := u.client.Charges.SettleCreate(context.Background(), "order-42/charge", &SettleOptions{Request: refCharge()})
	require.NoError(t, err)
	require.True(t, s.Recorded)
	assert.Equal(t, "ch_found", s.Charge.UUID)
	ch, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithReference("order-42/charge"))
	require.NoError(t, err, "settled, it answers from the journal")
	assert.True(t, ch.Meta.FromJournal)
	assert.Equal(t, "ch_found", ch.UUID)
	assert.Zero(t, hits.Load(), "never a POST")
}

// A settled entry of the earlier wire form answers as before: its stored
// answer, in the guide's shape, still reads as a Charge, nothing sent.
func TestLegacySettledChargeAnswersFromTheJournal(t *testing.T) {
	j := journal.NewMemory()
	u := setup(t, payonce.WithJournal(j))
	hits := counted(u)
	e := reserveGuideEntry(t, u.client, j, "order-42/charge", "charges.create", PathCharges, guideBody, guideSummary, guideAnswer)
	require.Equal(t, payonce.JournalSucceeded, e.State)

	ch, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithReference("order-42/charge"))
	require.NoError(t, err)
	assert.Equal(t, "ch_old", ch.UUID)
	assert.Equal(t, StatusConfirmed, ch.Status)
	assert.Equal(t, "100.00", ch.Amount.String(), "the guide's string amount reads exactly")
	total, err := ch.Total()
	require.NoError(t, err)
	assert.Equal(t, "100.00", total.String())
	assert.True(t, ch.Meta.FromJournal)
	assert.Equal(t, e.Key, ch.Meta.Key.String())
	var raw map[string]any
	require.NoError(t, json.Unmarshal(ch.Raw(), &raw))
	assert.Contains(t, raw, "card", "what the SDK no longer models is kept")
	assert.Zero(t, hits.Load())
}

// A refund or cancel the earlier version recorded on the guide's body-form
// path is never sent again on the path form: refused while in doubt,
// answered from the journal once settled.
func TestLegacyRefundAndCancel(t *testing.T) {
	j := journal.NewMemory()
	u := setup(t, payonce.WithJournal(j))
	hits := counted(u)
	c := u.client.WithAccount(Account{MerchantID: "m", WalletUUID: "w-1"})
	reserveGuideEntry(t, c, j, "order-42/refund", "charges.refund", guideRefundPath,
		`{"charge_uuid":"ch_old","amount":"30.00","reason":"one item"}`, "", "")
	reserveGuideEntry(t, c, j, "order-42/cancel", "charges.cancel", guideCancelPath,
		`{"charge_uuid":"ch_old","wallet_uuid":"w-1"}`, "", `{"charge_uuid":"ch_old","status":"canceled"}`)

	_, err := c.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "ch_old", Amount: mustAmount("30"), Reason: "one item"},
		payonce.WithReference("order-42/refund"))
	require.ErrorIs(t, err, ErrLegacyEntry)
	assert.Contains(t, err.Error(), "charges.refund")
	assert.Equal(t, "legacy-key-order-42-refund", payonce.KeyOf(err).String())

	_, err = c.Charges.Refund(context.Background(), &RefundRequest{ChargeUUID: "ch_old", Amount: mustAmount("31")},
		payonce.WithReference("order-42/refund"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.NotErrorIs(t, err, ErrLegacyEntry, "another refund: a plain conflict")

	ch, err := c.Charges.Cancel(context.Background(), &CancelRequest{ChargeUUID: "ch_old"}, payonce.WithReference("order-42/cancel"))
	require.NoError(t, err)
	assert.Equal(t, StatusCanceled, ch.Status)
	assert.True(t, ch.Meta.FromJournal)
	assert.Zero(t, hits.Load(), "nothing sent")
}

// An entry of a version before keyed fingerprints (a plain SHA-256 of the
// guide's body) and before summaries keeps its meaning too: in doubt it
// is refused; settled it answers from the journal, and its fingerprint is
// rewritten keyed, so no row keeps an unkeyed digest of the card.
func TestLegacyEntryWithAPlainFingerprintAndNoSummary(t *testing.T) {
	j := journal.NewMemory()
	u := setup(t, payonce.WithJournal(j))
	hits := counted(u)
	plain := func(body string) string {
		h := sha256.New()
		h.Write([]byte(http.MethodPost + "\x00" + PathCharges + "\x00" + body))
		return hex.EncodeToString(h.Sum(nil))
	}
	now := u.client.view.Now()
	for _, ref := range []string{"order-7/charge", "order-8/charge"} {
		_, _, err := j.Reserve(context.Background(), payonce.JournalEntry{Scope: u.client.core.Scope(), Reference: ref, Operation: "charges.create",
			Method: http.MethodPost, Path: PathCharges, Key: "legacy-plain-key-" + ref[:7], KeyCreated: now.Add(-time.Hour),
			Fingerprint: plain(guideBody), State: payonce.JournalPending, Sent: true, Attempts: 1, CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)})
		require.NoError(t, err)
	}
	_, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithReference("order-7/charge"))
	require.ErrorIs(t, err, ErrLegacyEntry)

	_, err = u.client.core.Settle(context.Background(), "order-8/charge", payonce.Settlement{State: payonce.JournalSucceeded, Result: []byte(guideAnswer), StatusCode: 200, Reason: "earlier"})
	require.NoError(t, err)
	ch, err := u.client.Charges.Create(context.Background(), refCharge(), payonce.WithReference("order-8/charge"))
	require.NoError(t, err)
	assert.True(t, ch.Meta.FromJournal)
	assert.Equal(t, "ch_old", ch.UUID)
	e, err := j.Get(context.Background(), u.client.core.Scope(), "order-8/charge")
	require.NoError(t, err)
	assert.NotEqual(t, plain(guideBody), e.Fingerprint, "the plain digest is replaced")
	assert.True(t, strings.HasPrefix(e.Fingerprint, "hmac-sha256:"), e.Fingerprint)
	assert.Zero(t, hits.Load())
}
