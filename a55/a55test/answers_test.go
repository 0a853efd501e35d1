package a55test_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/a55/a55test"
)

// documented reads testdata/a55/reference.json: the statuses and codes
// A55 documents, and the members of its charge answer (with message[]'s).
func documented(t *testing.T) (statuses, codes, members, message map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/a55/reference.json")
	require.NoError(t, err)
	type field struct {
		Name   string  `json:"name"`
		Fields []field `json:"fields"`
	}
	var ref struct {
		Endpoints []struct {
			Name     string  `json:"name"`
			Response []field `json:"response"`
		} `json:"endpoints"`
		Statuses []struct{ Name string } `json:"statuses"`
		Codes    []struct{ Code string } `json:"codes"`
	}
	require.NoError(t, json.Unmarshal(b, &ref))
	statuses, codes, members, message = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range ref.Statuses {
		statuses[s.Name] = true
	}
	for _, c := range ref.Codes {
		codes[c.Code] = true
	}
	for _, e := range ref.Endpoints {
		if e.Name != "create_charge" {
			continue
		}
		for _, f := range e.Response {
			members[f.Name] = true
			if f.Name == "message" {
				for _, m := range f.Fields {
					message[m.Name] = true
				}
			}
		}
	}
	require.NotEmpty(t, message)
	return statuses, codes, members, message
}

// Each answer a test can ask for, in the shape A55 documents: a code of
// its code-response page in the charge-level shape, or a charge in a
// documented status; what ran shows in the ledger, what was answered in
// the request log.
func TestEachAnswerAsDocumented(t *testing.T) {
	statuses, codes, members, message := documented(t)
	for _, tc := range []struct {
		name     string
		answer   a55test.Answer
		status   int
		named    bool // the answer names a charge
		url3DS   bool
		executed int // operations under the key
	}{
		{"timeout, nothing made", a55test.Answer{Code: a55test.AnswerTimeout}, 504, false, false, 0},
		{"timeout, made", a55test.Answer{Code: a55test.AnswerTimeout, Executed: true}, 504, true, false, 1},
		{"timeout, made, not named", a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, OmitChargeUUID: true}, 504, false, false, 1},
		{"duplicate of a fresh key", a55test.Answer{Code: a55test.AnswerDuplicateRequest, HTTPStatus: 400}, 400, false, false, 0},
		{"3ds required", a55test.Answer{Code: a55test.Answer3DSRequired}, 400, true, true, 1},
		{"3ds required, no challenge", a55test.Answer{Code: a55test.Answer3DSRequired, NoChallenge: true}, 400, true, false, 1},
		{"3ds unavailable", a55test.Answer{Code: a55test.Answer3DSUnavailable}, 503, false, false, 0},
		{"processing error", a55test.Answer{Code: a55test.AnswerProcessingError}, 500, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			a := tc.answer
			a.Path, a.Count = a55test.ChargePath, 1
			require.NoError(t, s.AddAnswer(a))
			key := "answer-key-" + strings.NewReplacer(" ", "-", ",", "").Replace(tc.name)
			got := charge(t, s, key, withCard("4111111111111111", ""))
			require.Equal(t, tc.status, got.Status, "%s", got.Raw)
			for k := range got.JSON {
				assert.True(t, members[k], "%s is no member of A55's charge answer", k)
			}
			assert.True(t, statuses[got.JSON["status"].(string)])
			assert.Equal(t, "error", got.JSON["status"])
			assert.True(t, codes[errCode(got)], "%s is a code of the code-response page", errCode(got))
			assert.Equal(t, tc.answer.Code, errCode(got))
			for k := range got.JSON["message"].([]any)[0].(map[string]any) {
				assert.True(t, message[k], "message[0].%s", k)
			}
			assert.Equal(t, tc.named, got.JSON["charge_uuid"] != nil)
			assert.Equal(t, tc.url3DS, got.JSON["url_3ds"] != nil)
			assert.Equal(t, tc.executed, s.Ledger().Count(key))
			for _, op := range s.Ledger().ByKey(key) {
				assert.Equal(t, tc.answer.Code, op.Code)
				assert.True(t, statuses[op.Status], op.Status)
			}
			reqs := s.Requests()
			assert.Equal(t, tc.answer.Code, reqs[len(reqs)-1].Answer)
		})
	}
}

// The double charge a client must avoid: the charge is made and the
// answer is TIMEOUT. Reading the charge it names charges once; sending
// the key again blindly charges twice, and the ledger says so.
func TestTimeoutTellsExecutionsApart(t *testing.T) {
	s := newFake(t)
	require.NoError(t, s.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, Path: a55test.ChargePath, Count: 1}))
	const key = "order-7-payment-0001"
	body := withCard("4111111111111111", "")
	got := charge(t, s, key, body)
	require.Equal(t, http.StatusGatewayTimeout, got.Status)
	id := got.JSON["charge_uuid"].(string)

	read := do(t, s.HTTPClient(), http.MethodGet, s.URL+a55test.ChargePath+id+"/", "", "")
	require.Equal(t, http.StatusOK, read.Status)
	assert.Equal(t, "confirmed", read.JSON["status"], "the charge went through")
	require.True(t, s.Ledger().ExecutedOnce(key), "a client that reads the charge: once")
	op := s.Ledger().ByKey(key)[0]
	assert.Equal(t, a55test.AnswerTimeout, op.Code)
	assert.Equal(t, id, op.ID)

	again := charge(t, s, key, body)
	require.Equal(t, http.StatusOK, again.Status, "A55 kept nothing under the key")
	assert.Equal(t, 2, s.Ledger().Count(key), "a blind retry: twice")
	ops := s.Ledger().ByKey(key)
	assert.NotEqual(t, ops[0].ID, ops[1].ID)
	assert.Empty(t, ops[1].Code)

	// Then A55 says the key was used, naming the first charge.
	require.NoError(t, s.AddAnswer(a55test.Answer{Code: a55test.AnswerDuplicateRequest, IdempotencyKey: key, Count: 1}))
	dup := charge(t, s, key, body)
	assert.Equal(t, http.StatusConflict, dup.Status)
	assert.Equal(t, a55test.AnswerDuplicateRequest, errCode(dup))
	assert.Equal(t, ops[1].ID, dup.JSON["charge_uuid"], "the charge the key made last")
	assert.Equal(t, 2, s.Ledger().Count(key))
}

// A TIMEOUT's charge that waits for the acquirer ends when told, or at
// its time on the fake's clock; a capture answered pre_captured is paid
// when confirmed; a refund answered refund_error gives nothing back.
// Each change sends its signed webhook.
func TestLateStatusesFromGo(t *testing.T) {
	lf := newLifeFake(t)
	s := lf.srv
	card := map[string]any{"card_number": "4024007153763191", "card_name": "MARIA SILVA", "card_expiry_month": "12",
		"card_expiry_year": "2031", "card_cvv": "123"}
	timeoutCharge := func(a a55test.Answer) string {
		a.Code, a.Executed, a.Path, a.Count = a55test.AnswerTimeout, true, a55test.ChargePath, 1
		require.NoError(t, s.AddAnswer(a))
		body := map[string]any{"wallet_uuid": s.WalletUUID(), "merchant_id": s.MerchantID(), "payer_name": "João Silva",
			"payer_email": "joao@example.com", "payer_tax_id": "39999999999", "payer_cell_phone": "+5511988887777",
			"installment_value": 150, "installment_count": 1, "currency": "BRL", "due_date": "2030-12-31",
			"description": "order 42", "type_charge": "credit_card", "webhook_url": lf.hook,
			"payer_address": map[string]any{"street": "Av. Paulista", "city": "São Paulo", "state": "SP", "postal_code": "01310-100"}}
		for k, v := range card {
			body[k] = v
		}
		b, _ := json.Marshal(body)
		got := charge(t, s, "", string(b))
		require.Equal(t, http.StatusGatewayTimeout, got.Status, "%s", got.Raw)
		assert.Equal(t, "pending", lf.webhook(t)["status"])
		return got.JSON["charge_uuid"].(string)
	}
	for _, tc := range []struct {
		name   string
		end    func(string) error
		status string
	}{
		{"ConfirmAtAcquirer", s.ConfirmAtAcquirer, "confirmed"},
		{"DeclineAtAcquirer", s.DeclineAtAcquirer, "declined"},
		{"FailAtAcquirer", s.FailAtAcquirer, "error"},
	} {
		id := timeoutCharge(a55test.Answer{Hold: true})
		st, events, err := s.ChargeStatus(id)
		require.NoError(t, err)
		assert.Equal(t, "pending", st)
		assert.Equal(t, []a55test.Event{a55test.EventAcquirerConfirmed, a55test.EventAcquirerDeclined, a55test.EventAcquirerFailed}, events)
		require.NoError(t, tc.end(id), tc.name)
		assert.Equal(t, tc.status, lf.webhook(t)["status"], tc.name)
	}
	id := timeoutCharge(a55test.Answer{Then: a55test.StatusDeclined, After: time.Minute})
	s.Clock().Advance(time.Minute)
	s.DeliverDueWebhooks()
	hook := lf.webhook(t)
	assert.Equal(t, "declined", hook["status"], "at its time")
	assert.Equal(t, "CARD_DECLINED", hook["error_code"])
	st, _, err := s.ChargeStatus(id)
	require.NoError(t, err)
	assert.Equal(t, "declined", st)

	// pre_captured: the merchant's capture, or A55's own.
	require.NoError(t, s.AddAnswer(a55test.Answer{Status: a55test.StatusPreCaptured, Path: a55test.CapturePath, Count: 1}))
	auth := lf.charge(t, "credit_card", with(card, map[string]any{"capture": false}))["charge_uuid"].(string)
	got := do(t, s.HTTPClient(), http.MethodPost, s.URL+a55test.CapturePath, "capture-key-000001",
		`{"charge_uuid":"`+auth+`","wallet_uuid":"`+s.WalletUUID()+`"}`)
	require.Equal(t, http.StatusOK, got.Status, "%s", got.Raw)
	assert.Equal(t, "pre_captured", got.JSON["status"])
	assert.Equal(t, "pre_captured", lf.webhook(t)["status"])
	assert.Equal(t, "pre_captured", s.Ledger().ByKey("capture-key-000001")[0].Status)
	require.NoError(t, s.ConfirmCapture(auth))
	assert.Equal(t, "paid", lf.webhook(t)["status"])
	auth = lf.charge(t, "credit_card", with(card, map[string]any{"capture": false}))["charge_uuid"].(string)
	require.NoError(t, s.SubmitCapture(auth))
	assert.Equal(t, "pre_captured", lf.webhook(t)["status"])
	require.NoError(t, s.ConfirmCapture(auth))
	assert.Equal(t, "paid", lf.webhook(t)["status"])

	// refund_error: from the API, or from A55's side; a later refund goes through.
	require.NoError(t, s.AddAnswer(a55test.Answer{Status: a55test.StatusRefundError, Path: a55test.ChargePath + "*", Count: 1}))
	got = do(t, s.HTTPClient(), http.MethodPost, s.URL+a55test.ChargePath+auth+"/refund/"+s.WalletUUID()+"/", "refund-key-0000001", `{}`)
	require.Equal(t, http.StatusOK, got.Status, "%s", got.Raw)
	assert.Equal(t, "refund_error", got.JSON["status"])
	assert.Equal(t, 150.0, got.JSON["amount_remaining"], "nothing went back")
	hook = lf.webhook(t)
	assert.Equal(t, "refund_error", hook["status"])
	assert.Equal(t, "150.00", hook["refund_amount"])
	require.NoError(t, s.Refund(auth, "50.00"))
	assert.Equal(t, "paid", lf.webhook(t)["status"], "back to paid, 100.00 left")
	require.NoError(t, s.FailRefund(auth, ""))
	hook = lf.webhook(t)
	assert.Equal(t, "refund_error", hook["status"])
	assert.Equal(t, "100.00", hook["refund_amount"])

	// chargeback: a dispute lost, the end.
	require.NoError(t, s.Chargeback(auth, "fraud"))
	lf.webhook(t)
	require.NoError(t, s.LoseChargeback(auth, ""))
	hook = lf.webhook(t)
	assert.Equal(t, "chargeback", hook["status"])
	assert.Equal(t, "fraud", hook["chargeback_reason"])
	st, events, err := s.ChargeStatus(auth)
	require.NoError(t, err)
	assert.Equal(t, "chargeback", st)
	assert.Empty(t, events)
	assert.ErrorIs(t, s.ConfirmCapture(auth), a55test.ErrEventNotAllowed)
}

// An Answer the fake cannot apply is refused; Reset and ClearAnswers
// remove them.
func TestAddAnswerRules(t *testing.T) {
	s := newFake(t)
	for _, bad := range []a55test.Answer{
		{},
		{Code: "CARD_DECLINED"},
		{Code: a55test.AnswerProcessingError, Executed: true},
		{Code: a55test.AnswerTimeout, Executed: true, Then: "paid"},
		{Status: a55test.StatusRefundError, HTTPStatus: 500},
	} {
		assert.ErrorIs(t, s.AddAnswer(bad), a55test.ErrInvalidAnswer, "%+v", bad)
	}
	require.NoError(t, s.AddAnswer(a55test.Answer{Code: a55test.AnswerProcessingError}))
	assert.Equal(t, http.StatusInternalServerError, charge(t, s, "", withCard("4111111111111111", "")).Status)
	s.Reset()
	assert.Equal(t, http.StatusOK, charge(t, s, "", withCard("4111111111111111", "")).Status, "a reset removes the answers")
	require.NoError(t, s.AddAnswer(a55test.Answer{Code: a55test.AnswerProcessingError}))
	s.ClearAnswers()
	assert.Equal(t, http.StatusOK, charge(t, s, "", withCard("4111111111111111", "")).Status)
}

// with merges maps, later ones winning.
func with(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
