package a55fake_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// answerShape checks an injected code's answer against the reference:
// the charge-level shape, its members among the create-charge answer's,
// its status and code documented ones, message[] holding the
// reference's members; and returns it.
func answerShape(t *testing.T, r reply, status int, code string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	ref := loadReference(t)
	out := r.obj(t)
	charge := ref.endpoint(t, "create_charge")
	names := responseNames(charge.Response)
	for k := range out {
		assert.True(t, names[k], "%s is not a member of A55's charge answer: %s", k, r.body)
	}
	var statuses, codes []string
	for _, s := range ref.Statuses {
		statuses = append(statuses, s.Name)
	}
	for _, c := range ref.Codes {
		codes = append(codes, c.Code)
	}
	assert.Equal(t, "error", out["status"], "the charge-level shape")
	assert.Contains(t, statuses, out["status"])
	assert.Contains(t, codes, code, "a code of the code-response page")
	msgs, ok := out["message"].([]any)
	require.True(t, ok, "message is a list: %s", r.body)
	require.Len(t, msgs, 1)
	var want []string
	for _, f := range charge.Response {
		if f.Name == "message" {
			want = flatNames(f.Fields, "")
		}
	}
	m := msgs[0].(map[string]any)
	assert.ElementsMatch(t, want, keysOf(m, ""), "message[0]'s members")
	assert.Equal(t, code, m["code"])
	assert.NotEmpty(t, m["source"])
	assert.NotEmpty(t, m["description"])
	return out
}

// ops returns the ledger's operations under key.
func (h *harness) ops(key string) []fakeserver.Operation { return h.e.Ledger().ByKey(key) }

// lastAttempt returns the attempt log's latest attempt.
func (h *harness) lastAttempt(t *testing.T) fakeserver.Attempt {
	t.Helper()
	all := h.e.Attempts().All()
	require.NotEmpty(t, all)
	return all[len(all)-1]
}

// cardBody is a credit card charge of the harness's account.
func (h *harness) cardBody(number string, extra map[string]any) map[string]any {
	return h.body("credit_card", with(card(number), extra))
}

func (h *harness) get(t *testing.T, id string) map[string]any {
	t.Helper()
	r := h.do(t, http.MethodGet, chargePath+id+"/", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.obj(t)
}

// A TIMEOUT whose charge was never made names none, is not stored, and
// the same key and body then run once: one charge.
func TestTimeoutWithNothingMade(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Path: chargePath, Count: 1}))
	key := keyN("timeout-none", 1)
	body := h.cardBody("4024007153763191", nil)

	out := answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusGatewayTimeout, "TIMEOUT")
	assert.NotContains(t, out, "charge_uuid", "nothing was made")
	att := h.lastAttempt(t)
	assert.Equal(t, "TIMEOUT", att.Answer)
	assert.False(t, att.Executed, "nothing ran")
	assert.Empty(t, h.ops(key))
	ids, _ := h.list(t, map[string][]string{"wallet_uuid": {h.acct.WalletUUID}})
	assert.Empty(t, ids)

	r := h.do(t, http.MethodPost, chargePath, key, body)
	require.Equal(t, http.StatusOK, r.status, "not stored: the key runs again")
	assert.Equal(t, "confirmed", r.obj(t)["status"])
	ops := h.ops(key)
	require.Len(t, ops, 1, "charged once")
	assert.Empty(t, ops[0].Code)
	assert.Equal(t, "confirmed", ops[0].Status)
}

// A TIMEOUT whose charge was made names it, and the charge is confirmed
// at A55: a client that reads it charges once; one that sends the key
// again blindly makes a second charge, and the ledger shows both.
func TestTimeoutWithTheChargeMade(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Executed: true, Path: chargePath, Count: 1}))
	key := keyN("timeout-made", 1)
	body := h.cardBody("4024007153763191", map[string]any{"webhook_url": rc.url})

	out := answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusGatewayTimeout, "TIMEOUT")
	first, _ := out["charge_uuid"].(string)
	require.NotEmpty(t, first)
	assert.True(t, h.lastAttempt(t).Executed)
	got := h.get(t, first)
	assert.Equal(t, "confirmed", got["status"], "made and confirmed at once")
	assert.Equal(t, key, got["idempotency_key"])
	assert.Equal(t, json.Number("150.00"), got["amount_remaining"])
	assert.Equal(t, "confirmed", verify(t, h, rc.next(t, h))["status"])
	ops := h.ops(key)
	require.Len(t, ops, 1)
	assert.Equal(t, a55fake.AnswerTimeout, ops[0].Code)
	assert.Equal(t, "confirmed", ops[0].Status)
	assert.Equal(t, first, ops[0].ID)

	// A blind retry: A55 kept nothing under the key (only 2xx), so it runs again.
	r := h.do(t, http.MethodPost, chargePath, key, body)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	second := r.obj(t)["charge_uuid"].(string)
	assert.NotEqual(t, first, second)
	ops = h.ops(key)
	require.Len(t, ops, 2, "the double charge")
	assert.Equal(t, []string{first, second}, []string{ops[0].ID, ops[1].ID})
	assert.Empty(t, ops[1].Code)
	rc.next(t, h)
}

// The charge a TIMEOUT names ends as the rule says: at once, at a time
// on the fake clock (pending until then), or when an acquirer event is
// triggered; each end sends its webhook.
func TestTimeoutChargeEnds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rule      a55fake.AnswerRule
		trigger   a55fake.Event
		status    string
		errorCode string
	}{
		{"declined at once", a55fake.AnswerRule{Then: a55fake.StatusDeclined}, "", "declined", "CARD_DECLINED"},
		{"error at once", a55fake.AnswerRule{Then: a55fake.StatusError}, "", "error", "TIMEOUT"},
		{"confirmed after 5 min", a55fake.AnswerRule{After: 5 * time.Minute}, "", "confirmed", ""},
		{"declined after 5 min", a55fake.AnswerRule{Then: a55fake.StatusDeclined, After: 5 * time.Minute}, "", "declined", "CARD_DECLINED"},
		{"held, confirmed", a55fake.AnswerRule{Hold: true}, a55fake.EventAcquirerConfirmed, "confirmed", ""},
		{"held, declined", a55fake.AnswerRule{Hold: true}, a55fake.EventAcquirerDeclined, "declined", "CARD_DECLINED"},
		{"held, failed", a55fake.AnswerRule{Hold: true}, a55fake.EventAcquirerFailed, "error", "TIMEOUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, a55fake.Config{})
			rc := newReceiver(t)
			rule := tc.rule
			rule.Code, rule.Executed, rule.Count = a55fake.AnswerTimeout, true, 1
			require.NoError(t, h.f.AddAnswer(rule))
			key := keyN("timeout-end", 1)
			out := answerShape(t, h.do(t, http.MethodPost, chargePath, key, h.cardBody("4024007153763191",
				map[string]any{"webhook_url": rc.url})), http.StatusGatewayTimeout, "TIMEOUT")
			id := out["charge_uuid"].(string)
			created := verify(t, h, rc.next(t, h))
			waits := rule.After > 0 || rule.Hold
			if waits {
				assert.Equal(t, "pending", created["status"], "sent to the acquirer, its answer awaited")
				got := h.get(t, id)
				assert.Equal(t, "pending", got["status"])
				assert.NotContains(t, got, "url_3ds", "no 3DS challenge")
				st, err := h.f.ChargeState(id)
				require.NoError(t, err)
				assert.Equal(t, []a55fake.Event{a55fake.EventAcquirerConfirmed, a55fake.EventAcquirerDeclined, a55fake.EventAcquirerFailed}, st.Events)
				assert.Equal(t, "pending", h.ops(key)[0].Status, "the ledger has the status it committed")
			}
			switch {
			case tc.trigger != "":
				r := h.admin(t, http.MethodPost, "/_fakepay/a55/charges/"+id+"/events", map[string]any{"event": tc.trigger})
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			case rule.After > 0:
				h.e.Clock().Advance(rule.After - time.Second)
				h.f.DeliverDueWebhooks()
				assert.Equal(t, "pending", h.get(t, id)["status"], "not before its time")
				h.e.Clock().Advance(time.Second)
			}
			final := created
			if waits {
				final = verify(t, h, rc.next(t, h))
			}
			assert.Equal(t, tc.status, final["status"])
			assert.Equal(t, tc.status, h.get(t, id)["status"])
			if tc.errorCode != "" {
				assert.Equal(t, tc.errorCode, final["error_code"])
			} else {
				assert.NotContains(t, final, "error_code")
			}
			st, err := h.f.ChargeState(id)
			require.NoError(t, err)
			assert.NotContains(t, st.Events, a55fake.EventAcquirerConfirmed, "it ended")
			require.Len(t, h.ops(key), 1, "one charge made")
		})
	}
}

// A capture, refund or cancel answered TIMEOUT names its charge; made,
// it moved the charge, and the same key sent again moves it again.
func TestTimeoutOnMoves(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	w := h.acct.WalletUUID
	id := h.create(t, chargePath, h.cardBody("4024007153763191", nil))["charge_uuid"].(string)

	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Path: chargePath + "*", Count: 1}))
	key := keyN("refund-timeout", 1)
	refund := map[string]any{"amount": json.Number("50.00")}
	out := answerShape(t, h.do(t, http.MethodPost, refundPath(id, w), key, refund), http.StatusGatewayTimeout, "TIMEOUT")
	assert.Equal(t, id, out["charge_uuid"], "a move's answer names its charge")
	assert.Equal(t, json.Number("150.00"), h.get(t, id)["amount_remaining"], "nothing moved")
	assert.Empty(t, h.ops(key))

	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Executed: true, Path: chargePath + "*", Count: 1}))
	key = keyN("refund-timeout", 2)
	answerShape(t, h.do(t, http.MethodPost, refundPath(id, w), key, refund), http.StatusGatewayTimeout, "TIMEOUT")
	assert.Equal(t, json.Number("100.00"), h.get(t, id)["amount_remaining"], "refunded all the same")
	r := h.do(t, http.MethodPost, refundPath(id, w), key, refund)
	require.Equal(t, http.StatusOK, r.status, "not stored: a blind retry refunds again")
	assert.Equal(t, json.Number("50.00"), r.obj(t)["amount_remaining"])
	ops := h.ops(key)
	require.Len(t, ops, 2, "the double refund")
	assert.Equal(t, []string{"TIMEOUT", ""}, []string{ops[0].Code, ops[1].Code})
	assert.Equal(t, "charge.refund", ops[0].Kind)

	// A rule is used only where the move would run: a capture the charge
	// does not take gets its 409, and the rule is still there for the next.
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Executed: true, Path: capturePath, Count: 1}))
	r = h.do(t, http.MethodPost, capturePath, keyN("capture", 1), map[string]any{"charge_uuid": id, "wallet_uuid": w})
	assert.Equal(t, http.StatusConflict, r.status, "captured already: %s", r.body)
	auth := h.create(t, chargePath, h.cardBody("4024007153763191", map[string]any{"capture": false}))["charge_uuid"].(string)
	key = keyN("capture", 2)
	out = answerShape(t, h.do(t, http.MethodPost, capturePath, key, map[string]any{"charge_uuid": auth, "wallet_uuid": w}),
		http.StatusGatewayTimeout, "TIMEOUT")
	assert.Equal(t, auth, out["charge_uuid"])
	assert.Equal(t, "paid", h.get(t, auth)["status"])
	assert.Equal(t, "charge.capture", h.ops(key)[0].Kind)
}

// DUPLICATE_REQUEST answers a key already used with the charge it made,
// ahead of the stored answer, and runs nothing; a fresh key, or the
// variant without it, names none; 400 and the general shape on demand.
func TestDuplicateRequest(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	key := keyN("duplicate", 1)
	body := h.cardBody("4024007153763191", nil)
	r := h.do(t, http.MethodPost, chargePath, key, body)
	require.Equal(t, http.StatusOK, r.status)
	first := r.obj(t)["charge_uuid"].(string)

	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerDuplicateRequest, Count: 1}))
	out := answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusConflict, "DUPLICATE_REQUEST")
	assert.Equal(t, first, out["charge_uuid"], "the original charge")
	assert.Equal(t, "DUPLICATE_REQUEST", h.lastAttempt(t).Answer)
	assert.False(t, h.lastAttempt(t).Executed)
	r = h.do(t, http.MethodPost, chargePath, key, body)
	require.Equal(t, http.StatusOK, r.status, "then the stored answer again")
	assert.Equal(t, first, r.obj(t)["charge_uuid"])
	assert.Len(t, h.ops(key), 1, "charged once")

	// After a TIMEOUT whose charge was made, nothing is stored: the
	// duplicate names the charge the key made.
	key = keyN("duplicate", 2)
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout, Executed: true, Count: 1}))
	made := answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusGatewayTimeout, "TIMEOUT")["charge_uuid"]
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerDuplicateRequest, IdempotencyKey: key, Count: 1}))
	out = answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusConflict, "DUPLICATE_REQUEST")
	assert.Equal(t, made, out["charge_uuid"])
	assert.Len(t, h.ops(key), 1)

	// A refund's key names the refunded charge.
	key = keyN("duplicate", 3)
	r = h.do(t, http.MethodPost, refundPath(first, h.acct.WalletUUID), key, map[string]any{"amount": json.Number("1.00")})
	require.Equal(t, http.StatusOK, r.status)
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerDuplicateRequest, IdempotencyKey: key, HTTPStatus: 400, Count: 1}))
	out = answerShape(t, h.do(t, http.MethodPost, refundPath(first, h.acct.WalletUUID), key, map[string]any{"amount": json.Number("1.00")}),
		http.StatusBadRequest, "DUPLICATE_REQUEST")
	assert.Equal(t, first, out["charge_uuid"])

	for _, tc := range []struct {
		name string
		rule a55fake.AnswerRule
		key  string
	}{
		{"a fresh key", a55fake.AnswerRule{}, keyN("duplicate-fresh", 1)},
		{"without charge_uuid", a55fake.AnswerRule{OmitChargeUUID: true}, keyN("duplicate", 1)},
	} {
		rule := tc.rule
		rule.Code, rule.Count = a55fake.AnswerDuplicateRequest, 1
		require.NoError(t, h.f.AddAnswer(rule))
		out = answerShape(t, h.do(t, http.MethodPost, chargePath, tc.key, body), http.StatusConflict, "DUPLICATE_REQUEST")
		assert.NotContains(t, out, "charge_uuid", tc.name)
	}
	assert.Empty(t, h.ops(keyN("duplicate-fresh", 1)), "nothing ran")

	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerDuplicateRequest, Shape: a55fake.ShapeGeneral, Count: 1}))
	r = h.do(t, http.MethodPost, chargePath, keyN("duplicate", 1), body)
	assert.Equal(t, http.StatusConflict, r.status)
	assert.Equal(t, "DUPLICATE_REQUEST", r.code(t), "the general shape: %s", r.body)
	assert.Equal(t, first, r.obj(t)["charge_uuid"], "the charge beside it")

	// No key, or a request that is no charge's create or move: not answered.
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerDuplicateRequest, Count: 1}))
	r = h.do(t, http.MethodPost, chargePath, "", body)
	assert.Equal(t, http.StatusOK, r.status)
	r = h.do(t, http.MethodPost, walletPath, keyN("wallet", 1), map[string]any{"name": "Shop"})
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, 0, h.f.Answers()[len(h.f.Answers())-1].Fired)
}

// 3DS_REQUIRED makes the charge in status error with its code and a
// url_3ds to the fake's challenge page, which passes it as a 3DS charge's;
// the variant without a challenge ends there; only a credit card charge
// without 3DS gets it.
func Test3DSRequired(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.Answer3DSRequired}))

	// Not for a PIX, a card charge without card fields, or one with 3DS.
	assert.Equal(t, "issued", h.create(t, chargePath, h.body("pix", nil))["status"])
	assert.Equal(t, "issued", h.create(t, chargePath, h.body("credit_card", nil))["status"])
	assert.Equal(t, "pending", h.create(t, chargePath, h.cardBody("4024007153763191", map[string]any{"threeds_authentication": true,
		"device_info": map[string]any{"ip_address": "192.0.2.1"}}))["status"])
	assert.Equal(t, 0, h.f.Answers()[0].Seen)

	key := keyN("3ds-required", 1)
	out := answerShape(t, h.do(t, http.MethodPost, chargePath, key, h.cardBody("4024007153763191", map[string]any{"webhook_url": rc.url})),
		http.StatusBadRequest, "3DS_REQUIRED")
	id := out["charge_uuid"].(string)
	assert.Equal(t, h.srv.URL+"/_fakepay/a55/3ds/"+id, out["url_3ds"])
	got := h.get(t, id)
	assert.Equal(t, "error", got["status"])
	assert.Equal(t, out["url_3ds"], got["url_3ds"])
	assert.Equal(t, "3DS_REQUIRED", got["message"].([]any)[0].(map[string]any)["code"])
	hook := verify(t, h, rc.next(t, h))
	assert.Equal(t, "error", hook["status"])
	assert.Equal(t, "3DS_REQUIRED", hook["error_code"])
	ops := h.ops(key)
	require.Len(t, ops, 1, "the charge was made: it may yet take money")
	assert.Equal(t, []string{"3DS_REQUIRED", "error"}, []string{ops[0].Code, ops[0].Status})

	_, _, resp := h.page(t, out["url_3ds"].(string))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the challenge page")
	st, err := h.f.ChargeState(id)
	require.NoError(t, err)
	assert.Equal(t, []a55fake.Event{a55fake.Event3DSCompleted, a55fake.Event3DSFailed, a55fake.Event3DSAbandoned}, st.Events)
	_, err = h.f.Trigger(id, a55fake.Event3DSCompleted, a55fake.TriggerOptions{})
	require.NoError(t, err)
	hook = verify(t, h, rc.next(t, h))
	assert.Equal(t, "confirmed", hook["status"])
	assert.NotContains(t, hook, "error_code")
	assert.Equal(t, "confirmed", h.get(t, id)["status"])

	// Left alone, its challenge is abandoned as a 3DS charge's is.
	id = answerShape(t, h.do(t, http.MethodPost, chargePath, keyN("3ds-required", 2), h.cardBody("4024007153763191", nil)),
		http.StatusBadRequest, "3DS_REQUIRED")["charge_uuid"].(string)
	h.e.Clock().Advance(a55fake.ThreeDSTimeout)
	h.f.DeliverDueWebhooks()
	assert.Equal(t, "canceled", h.get(t, id)["status"])

	h.f.ClearAnswers()
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.Answer3DSRequired, NoChallenge: true, Count: 1}))
	out = answerShape(t, h.do(t, http.MethodPost, chargePath, keyN("3ds-required", 3), h.cardBody("4024007153763191", nil)),
		http.StatusBadRequest, "3DS_REQUIRED")
	assert.NotContains(t, out, "url_3ds")
	id = out["charge_uuid"].(string)
	assert.NotContains(t, h.get(t, id), "url_3ds")
	st, err = h.f.ChargeState(id)
	require.NoError(t, err)
	assert.Empty(t, st.Events, "nothing to pass")
	r := h.do(t, http.MethodPost, cancelPath(id, h.acct.WalletUUID), "", nil)
	assert.Equal(t, http.StatusBadRequest, r.status, "an error charge is not canceled")

	// Answered 200, the answer is stored: the key answers the same for good.
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.Answer3DSRequired, HTTPStatus: 200, Count: 1}))
	key = keyN("3ds-required", 4)
	body := h.cardBody("4024007153763191", nil)
	first := answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusOK, "3DS_REQUIRED")
	again := answerShape(t, h.do(t, http.MethodPost, chargePath, key, body), http.StatusOK, "3DS_REQUIRED")
	assert.Equal(t, first["charge_uuid"], again["charge_uuid"])
	assert.Len(t, h.ops(key), 1)
}

// 3DS_UNAVAILABLE and PROCESSING_ERROR run nothing and are not stored:
// the same key and body run once later.
func TestTransientAnswers(t *testing.T) {
	for _, tc := range []struct {
		code   string
		status int
	}{
		{a55fake.Answer3DSUnavailable, http.StatusServiceUnavailable},
		{a55fake.AnswerProcessingError, http.StatusInternalServerError},
	} {
		t.Run(tc.code, func(t *testing.T) {
			h := newHarness(t, a55fake.Config{})
			require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: tc.code, Count: 2, RetryAfter: 60}))
			key := keyN("transient", 1)
			body := h.cardBody("4024007153763191", nil)
			for range 2 {
				r := h.do(t, http.MethodPost, chargePath, key, body)
				out := answerShape(t, r, tc.status, tc.code)
				assert.NotContains(t, out, "charge_uuid")
				assert.Equal(t, "60", r.header.Get("Retry-After"))
				assert.False(t, h.lastAttempt(t).Executed)
			}
			assert.Empty(t, h.ops(key))
			r := h.do(t, http.MethodPost, chargePath, key, body)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			assert.Len(t, h.ops(key), 1, "charged once")
			r = h.do(t, http.MethodPost, chargePath, key, body)
			assert.Equal(t, http.StatusOK, r.status, "then stored")
			assert.Len(t, h.ops(key), 1)
		})
	}
	h := newHarness(t, a55fake.Config{})
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.Answer3DSUnavailable, Shape: a55fake.ShapeGeneral}))
	assert.Equal(t, "issued", h.create(t, chargePath, h.body("pix", nil))["status"], "3DS_UNAVAILABLE is for card charges")
	r := h.do(t, http.MethodPost, chargePath, "", h.cardBody("4024007153763191", nil))
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Equal(t, "3DS_UNAVAILABLE", r.code(t), "the general shape: %s", r.body)
	assert.NotContains(t, r.obj(t), "charge_uuid")
}

// A capture answered pre_captured is paid once the acquirer confirms it:
// on the trigger, or at its time on the fake clock; each with a webhook.
func TestPreCapturedAnswer(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	w := h.acct.WalletUUID
	authorise := func() string {
		id := h.create(t, chargePath, h.cardBody("4024007153763191", map[string]any{"capture": false, "webhook_url": rc.url}))["charge_uuid"].(string)
		rc.next(t, h)
		return id
	}
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Status: a55fake.StatusPreCaptured, Path: capturePath, Count: 1}))
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Status: a55fake.StatusPreCaptured, Path: capturePath, After: time.Hour, Count: 1}))

	id := authorise()
	key := keyN("pre-captured", 1)
	capture := map[string]any{"charge_uuid": id, "wallet_uuid": w}
	r := h.do(t, http.MethodPost, capturePath, key, capture)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "pre_captured", r.obj(t)["status"])
	assert.Equal(t, "pre_captured", verify(t, h, rc.next(t, h))["status"])
	ops := h.ops(key)
	require.Len(t, ops, 1)
	assert.Equal(t, []string{"charge.capture", "pre_captured", ""}, []string{ops[0].Kind, ops[0].Status, ops[0].Code})
	again := h.do(t, http.MethodPost, capturePath, key, capture)
	assert.Equal(t, r.body, again.body, "a 2xx answer: stored")
	assert.Equal(t, http.StatusConflict, h.do(t, http.MethodPost, refundPath(id, w), "", nil).status, "nothing to refund before it is paid")
	assert.Equal(t, http.StatusConflict, h.do(t, http.MethodPost, cancelPath(id, w), "", nil).status)
	st, err := h.f.ChargeState(id)
	require.NoError(t, err)
	assert.Equal(t, []a55fake.Event{a55fake.EventCaptureConfirmed}, st.Events)
	h.e.Clock().Advance(24 * time.Hour)
	h.f.DeliverDueWebhooks()
	assert.Equal(t, "pre_captured", h.get(t, id)["status"], "waits for the acquirer")
	r = h.admin(t, http.MethodPost, "/_fakepay/a55/charges/"+id+"/events", map[string]any{"event": "capture.confirmed"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "paid", verify(t, h, rc.next(t, h))["status"])

	id = authorise()
	r = h.do(t, http.MethodPost, capturePath, keyN("pre-captured", 2), map[string]any{"charge_uuid": id, "wallet_uuid": w})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "pre_captured", verify(t, h, rc.next(t, h))["status"])
	h.e.Clock().Advance(time.Hour)
	h.f.DeliverDueWebhooks()
	assert.Equal(t, "paid", verify(t, h, rc.next(t, h))["status"], "confirmed at its time")
	assert.Equal(t, "paid", h.get(t, id)["status"])
}

// A refund answered refund_error gives nothing back (amount_remaining
// unchanged) and is stored; a later refund succeeds.
func TestRefundErrorAnswer(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	rc := newReceiver(t)
	w := h.acct.WalletUUID
	id := h.create(t, chargePath, h.cardBody("4024007153763191", map[string]any{"webhook_url": rc.url}))["charge_uuid"].(string)
	rc.next(t, h)
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Status: a55fake.StatusRefundError, Path: chargePath + "*", Count: 1}))

	key := keyN("refund-error", 1)
	refund := map[string]any{"amount": json.Number("40.00")}
	r := h.do(t, http.MethodPost, refundPath(id, w), key, refund)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out := r.obj(t)
	assert.Equal(t, "refund_error", out["status"])
	assert.Equal(t, json.Number("150.00"), out["amount_remaining"], "nothing went back")
	hook := verify(t, h, rc.next(t, h))
	assert.Equal(t, "refund_error", hook["status"])
	assert.Equal(t, "40.00", hook["refund_amount"], "the amount that did not go back")
	ops := h.ops(key)
	require.Len(t, ops, 1)
	assert.Equal(t, []string{"refund_error", "40.00"}, []string{ops[0].Status, ops[0].Amount})
	assert.Equal(t, r.body, h.do(t, http.MethodPost, refundPath(id, w), key, refund).body, "stored")

	r = h.do(t, http.MethodPost, refundPath(id, w), keyN("refund-error", 2), refund)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out = r.obj(t)
	assert.Equal(t, "confirmed", out["status"], "a partial refund brings back the status before the failure")
	assert.Equal(t, json.Number("110.00"), out["amount_remaining"])
	rc.next(t, h)
}

// Rules are checked when added; the HTTP status gets its default.
func TestAnswerRuleValidation(t *testing.T) {
	for _, tc := range []struct {
		rule   a55fake.AnswerRule
		status int
	}{
		{a55fake.AnswerRule{Code: "TIMEOUT"}, 504},
		{a55fake.AnswerRule{Code: "DUPLICATE_REQUEST"}, 409},
		{a55fake.AnswerRule{Code: "3DS_REQUIRED"}, 400},
		{a55fake.AnswerRule{Code: "3DS_REQUIRED", HTTPStatus: 200}, 200},
		{a55fake.AnswerRule{Code: "3DS_UNAVAILABLE"}, 503},
		{a55fake.AnswerRule{Code: "PROCESSING_ERROR"}, 500},
		{a55fake.AnswerRule{Status: "pre_captured"}, 200},
		{a55fake.AnswerRule{Status: "refund_error"}, 200},
		{a55fake.AnswerRule{Code: "TIMEOUT", Executed: true, Then: "declined", After: time.Minute}, 504},
	} {
		r := tc.rule
		require.NoError(t, r.Validate(), "%+v", tc.rule)
		assert.Equal(t, tc.status, r.HTTPStatus, "%+v", tc.rule)
	}
	for _, bad := range []a55fake.AnswerRule{
		{},
		{Code: "TIMEOUT", Status: "pre_captured"},
		{Code: "CARD_DECLINED"},
		{Status: "paid"},
		{Code: "TIMEOUT", HTTPStatus: 200},
		{Code: "DUPLICATE_REQUEST", HTTPStatus: 500},
		{Status: "refund_error", HTTPStatus: 202},
		{Code: "PROCESSING_ERROR", Executed: true},
		{Code: "TIMEOUT", Then: "confirmed"},
		{Code: "TIMEOUT", Executed: true, Then: "paid"},
		{Code: "TIMEOUT", Executed: true, Hold: true, After: time.Minute},
		{Code: "TIMEOUT", Executed: true, After: -time.Second},
		{Status: "refund_error", After: time.Minute},
		{Code: "PROCESSING_ERROR", OmitChargeUUID: true},
		{Code: "TIMEOUT", NoChallenge: true},
		{Code: "TIMEOUT", Shape: "flat"},
		{Status: "pre_captured", Shape: "general"},
		{Code: "TIMEOUT", Count: -1},
		{Code: "TIMEOUT", Probability: 2},
		{Code: "TIMEOUT", Path: strings.Repeat("p", fakeserver.MaxRuleField+1)},
	} {
		err := bad.Validate()
		assert.ErrorIs(t, err, a55fake.ErrInvalidAnswer, "%+v", bad)
	}
}

// The admin API adds, lists and removes rules, each with its counters;
// a reset removes them but for the standing ones of Config.
func TestAnswersAdminAPI(t *testing.T) {
	h := newHarness(t, a55fake.Config{Answers: []a55fake.AnswerRule{{Code: a55fake.AnswerProcessingError, Path: "/nowhere"}}})
	r := h.admin(t, http.MethodPost, "/_fakepay/a55/answers", map[string]any{"code": "TIMEOUT", "executed": true, "then": "declined",
		"after": "5m", "path": chargePath, "count": 1})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var list struct {
		Rules []map[string]any `json:"rules"`
	}
	require.NoError(t, json.Unmarshal(r.body, &list))
	require.Len(t, list.Rules, 2)
	assert.Equal(t, map[string]any{"code": "TIMEOUT", "executed": true, "then": "declined", "after": "5m0s", "path": chargePath,
		"count": 1.0, "http_status": 504.0, "seen": 0.0, "fired": 0.0}, list.Rules[1])

	answerShape(t, h.do(t, http.MethodPost, chargePath, keyN("admin", 1), h.cardBody("4024007153763191", nil)), 504, "TIMEOUT")
	r = h.admin(t, http.MethodGet, "/_fakepay/a55/answers", nil)
	require.NoError(t, json.Unmarshal(r.body, &list))
	assert.Equal(t, 1.0, list.Rules[1]["fired"])

	for _, tc := range []struct {
		body any
		code string
	}{
		{map[string]any{"code": "TIMEOUT", "exectued": true}, "invalid_json"},
		{map[string]any{"code": "TIMEOUT", "after": "soon"}, "invalid_json"},
		{map[string]any{"code": "TIMEOUT", "then": "confirmed"}, "invalid_rule"},
		{map[string]any{"code": "CARD_DECLINED"}, "invalid_rule"},
		{nil, "invalid_rule"},
	} {
		r = h.admin(t, http.MethodPost, "/_fakepay/a55/answers", tc.body)
		assert.Equal(t, http.StatusBadRequest, r.status, "%v", tc.body)
		assert.Equal(t, tc.code, r.code(t), "%v: %s", tc.body, r.body)
	}
	r = h.admin(t, http.MethodDelete, "/_fakepay/a55/answers?index=7", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
	r = h.admin(t, http.MethodDelete, "/_fakepay/a55/answers?index=1", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.NoError(t, json.Unmarshal(r.body, &list))
	assert.Len(t, list.Rules, 1)
	r = h.admin(t, http.MethodPut, "/_fakepay/a55/answers", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)

	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerTimeout}))
	h.e.Reset()
	got := h.f.Answers()
	require.Len(t, got, 1, "the standing rule stays")
	assert.Equal(t, a55fake.AnswerProcessingError, got[0].Code)
	r = h.admin(t, http.MethodDelete, "/_fakepay/a55/answers", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"rules":[]}`, string(r.body))
}

// Nth and Probability pick requests as fault rules do, the same ones
// under the same seed.
func TestAnswerRuleSelection(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	require.NoError(t, h.f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerProcessingError, Nth: 2}))
	statuses := func(h *harness, n int) []int {
		var out []int
		for range n {
			out = append(out, h.do(t, http.MethodPost, chargePath, "", h.cardBody("4024007153763191", nil)).status)
		}
		return out
	}
	assert.Equal(t, []int{200, 500, 200}, statuses(h, 3))

	draw := func(seed uint64) []int {
		e := fakeserver.New(fakeserver.Options{Clock: fakeserver.NewFixedClock(start), Seed: seed, Seeded: true})
		f := a55fake.New(e, a55fake.Config{RateLimit: -1})
		srv := httptest.NewServer(f.Handler())
		t.Cleanup(func() { e.Close(); srv.Close() })
		acct, _ := f.AccountOf("demo-client")
		require.NoError(t, f.AddAnswer(a55fake.AnswerRule{Code: a55fake.AnswerProcessingError, Probability: 0.5}))
		return statuses(&harness{e: e, f: f, srv: srv, acct: acct}, 16)
	}
	a := draw(7)
	assert.Equal(t, a, draw(7))
	assert.Contains(t, a, 200)
	assert.Contains(t, a, 500)
}
