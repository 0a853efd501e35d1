package hostile

import (
	"github.com/payonce/payonce/internal/luhn"
	"github.com/payonce/payonce/payoncetest"
	"github.com/payonce/payonce/redact"

	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// Realistic values a result holds, that redaction must leave as they are.
const (
	readableTime    = "2026-11-29T18:49:12.123456789Z"
	readableCharge  = "550e8400-e29b-41d4-a716-446655440000"
	readableWallet  = "9b2d7a54-0c1e-4f7a-8d3b-123456789012"
	readableRequest = "req_01HF3K2M9Q7ZX4"
	readableAmount  = "1234.56"
)

// orderNumbers are 16 to 19 digit order numbers that are no card number:
// they fail the Luhn check, and so do their first 15 and 16 digits.
var orderNumbers = []string{"1234567890123456", "20261129000123457", "987654321098765432", "5647382910564738291"}

// readableForms is every form the test reads a value in: %v, %+v, %s, its
// JSON and a slog JSON and text line.
func readableForms(t *testing.T, v any) map[string]string {
	t.Helper()
	forms := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%s"} {
		forms[verb] = fmt.Sprintf(verb, v)
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	forms["json"] = string(b)
	var js, txt strings.Builder
	slog.New(slog.NewJSONHandler(&js, nil)).Info("result", "v", v)
	slog.New(slog.NewTextHandler(&txt, nil)).Info("result", "v", v)
	forms["slog-json"], forms["slog-text"] = js.String(), txt.String()
	return forms
}

// timeForms are the ways a form may write readableTime.
func timeForms() []string {
	ts, _ := time.Parse(time.RFC3339Nano, readableTime)
	return []string{ts.String(), readableTime, ts.Format(time.RFC3339Nano), ts.Format("2006-01-02T15:04:05.000Z07:00")}
}

// assertReadable checks that every form of v shows the timestamp, the
// amounts and the IDs it holds unchanged, and never the card number.
func assertReadable(t *testing.T, name string, v any, want ...string) {
	t.Helper()
	for form, out := range readableForms(t, v) {
		if form != "json" {
			for _, card := range []string{"4111111111111111", "4111 1111 1111 1111"} {
				assert.NotContains(t, out, card, "%s %s", name, form)
			}
		}
		found := false
		for _, ts := range timeForms() {
			found = found || strings.Contains(out, ts)
		}
		// (coinepay's JSON forms carry no created_at: nothing to check there)
		assert.True(t, found || form == "json" && !strings.Contains(out, "created_at"), "%s %s: the timestamp is masked: %s", name, form, out)
		assert.NotContains(t, out, "**.**", "%s %s", name, form)
		for _, w := range want {
			assert.Contains(t, out, w, "%s %s", name, form)
		}
	}
}

// Every A55 and Coinepay result type prints (%v, %+v, %s), encodes (JSON)
// and logs (slog) the timestamps with nanoseconds, amounts, UUIDs,
// request IDs and long order numbers a server sent as they are; a card
// number next to them is masked.
func TestResultsPrintOrdinaryValuesUnchanged(t *testing.T) {
	t.Parallel()
	for _, o := range orderNumbers {
		require.False(t, luhn.Valid(o), o)
		for _, n := range []int{15, 16} {
			require.False(t, n < len(o) && luhn.Valid(o[:n]), o)
		}
	}
	desc := "order " + strings.Join(orderNumbers, " / ") + " paid with 4111111111111111"
	a55Charge := `{"charge_uuid":"` + readableCharge + `","wallet_uuid":"` + readableWallet + `","status":"confirmed","amount":"` +
		readableAmount + `","currency":"BRL","description":"` + desc + `","created_at":"` + readableTime + `","updated_at":"` + readableTime + `"}`
	want := append([]string{readableCharge, readableWallet, readableAmount}, orderNumbers...)

	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"access_token":"tok-readable-0123456789","expires_in":3600,"token_type":"Bearer"}`)
	})
	mux.HandleFunc("POST "+a55.PathCharges, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", readableRequest)
		_, _ = fmt.Fprint(w, a55Charge)
	})
	mux.HandleFunc("POST "+a55.PathWallets, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", readableRequest)
		_, _ = fmt.Fprint(w, `{"wallet_uuid":"`+readableWallet+`","name":"Loja `+orderNumbers[0]+`","currency":"BRL","status":"active","created_at":"`+readableTime+`"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	auth := a55.ClientCredentials("client-id", "client-secret-readable")
	auth.TokenURL = srv.URL + "/oauth2/token"
	c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	ch, err := c.Charges.Create(t.Context(), cardCharge(), payonce.WithKey(keytest.Now(t, "readable-key-0123456789")))
	require.NoError(t, err)
	wl, err := c.Wallets.Create(t.Context(), a55test.WalletRequest("Loja"))
	require.NoError(t, err)
	var ev a55.WebhookEvent
	require.NoError(t, json.Unmarshal([]byte(a55Charge), &ev))
	page := &a55.ChargePage{Charges: []*a55.Charge{ch}, Page: 1}
	for name, v := range map[string]any{"*a55.Charge": ch, "a55.Charge": *ch, "*a55.ChargePage": page, "a55.ChargePage": *page} {
		assertReadable(t, name, v, want...)
	}
	assertReadable(t, "*a55.Wallet", wl, readableWallet, orderNumbers[0])
	assertReadable(t, "a55.Wallet", *wl, readableWallet, orderNumbers[0])
	for name, v := range map[string]any{"a55.WebhookEvent": ev, "*a55.WebhookEvent": &ev} {
		for form, out := range readableForms(t, v) {
			for _, w := range []string{readableCharge, readableWallet, readableAmount} {
				assert.Contains(t, out, w, "%s %s", name, form)
			}
			if form != "json" {
				assert.NotContains(t, out, "4111111111111111", "%s %s", name, form)
			}
		}
	}
	raw := redact.RawJSON(a55Charge)
	for _, verb := range []string{"%v", "%+v", "%s"} {
		out := fmt.Sprintf(verb, raw)
		assert.Contains(t, out, readableTime, "a raw body keeps its timestamp")
		assert.Contains(t, out, orderNumbers[3])
		assert.NotContains(t, out, "4111111111111111")
	}

	card := `{"card_id":"card_` + orderNumbers[1] + `","header_id":"` + readableCharge + `","package_id":"pkg_` + orderNumbers[2] +
		`","status":"active","currency":"USD","balance":"` + readableAmount + `","created_at":"` + readableTime + `","note":"` + desc + `"}`
	cc := coinepayHostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", readableRequest)
		data := card
		switch r.URL.Path {
		case coinepay.PathCardList:
			data = `{"items":[` + card + `],"page":1,"page_size":10}`
		case coinepay.PathCardApply:
			data = strings.TrimSuffix(card, "}") + `,"fee":"1.50","account_balance":"` + readableAmount + `"}`
		case coinepay.PathCardRecharge:
			data = `{"recharge_id":"rc_` + orderNumbers[3] + `","card_id":"card_1","amount":"` + readableAmount + `","status":"done","created_at":"` + readableTime + `"}`
		}
		_, _ = fmt.Fprint(w, `{"code":200,"message":"ok","message_key":"success","data":`+data+`}`)
	})
	r := callCards(t, cc)
	ap, rc, info, cpage := r.apply, r.recharge, r.info, r.page
	cardWant := []string{"card_" + orderNumbers[1], readableCharge, "pkg_" + orderNumbers[2], readableAmount}
	for name, v := range map[string]any{"*coinepay.ApplyResult": ap, "coinepay.ApplyResult": *ap, "coinepay.Card": ap.Card,
		"*coinepay.CardResult": info, "coinepay.CardResult": *info, "*coinepay.CardPage": cpage, "coinepay.CardPage": *cpage} {
		assertReadable(t, name, v, cardWant...)
	}
	for name, v := range map[string]any{"*coinepay.RechargeResult": rc, "coinepay.RechargeResult": *rc, "coinepay.Recharge": rc.Recharge} {
		for form, out := range readableForms(t, v) {
			assert.Contains(t, out, "rc_"+orderNumbers[3], "%s %s", name, form)
			assert.Contains(t, out, readableAmount, "%s %s", name, form)
			assert.NotContains(t, out, "**.**", "%s %s", name, form)
		}
	}
	for name, m := range map[string]payonce.Meta{"a55 meta": ch.Meta.Meta, "coinepay meta": info.Meta} {
		for form, out := range readableForms(t, m) {
			assert.Contains(t, out, readableRequest, "%s %s", name, form)
		}
	}
}
