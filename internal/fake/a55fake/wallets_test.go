package a55fake_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// A wallet in the reference's form answers wallet_uuid and, asked for,
// credentials that the token endpoint takes; the quickstart's {"name"}
// body answers the quickstart's shape, uuid "wal_...". Charges go into
// either.
func TestWallets(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	body := map[string]any{"entity_uuid": h.acct.EntityUUID, "customer_id": "cust_1", "currency": "MXN", "name": "Loja",
		"email": "fin@loja.example", "create_credentials": true}
	r := h.do(t, http.MethodPost, walletPath, keyN("wallet", 0), body)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	w := r.obj(t)
	assert.Equal(t, "MXN", w["currency"])
	assert.NotEqual(t, h.acct.MerchantUUID, w["merchant_uuid"], "no merchant_uuid: a new merchant")
	creds := w["credentials"].(map[string]any)
	require.NotEmpty(t, creds["client_id"])
	require.NotEmpty(t, creds["client_secret"])
	again := h.do(t, http.MethodPost, walletPath, keyN("wallet", 0), body)
	assert.Equal(t, r.body, again.body, "a replay answers the same wallet")

	tok, err := http.PostForm(h.srv.URL+"/oauth2/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {creds["client_id"].(string)}, "client_secret": {creds["client_secret"].(string)}})
	require.NoError(t, err)
	defer tok.Body.Close()
	assert.Equal(t, http.StatusOK, tok.StatusCode, "the wallet's credentials get a token")

	mxn := h.body("credit_card", with(card("4024007153763191"), map[string]any{"wallet_uuid": w["wallet_uuid"],
		"merchant_id": w["merchant_uuid"], "currency": "MXN"}))
	assert.Equal(t, "confirmed", h.create(t, chargePath, mxn)["status"])

	r = h.do(t, http.MethodPost, walletPath, "", with(body, map[string]any{"create_credentials": false, "merchant_uuid": h.acct.MerchantUUID}))
	require.Equal(t, http.StatusOK, r.status)
	w2 := r.obj(t)
	assert.NotContains(t, w2, "credentials")
	assert.Equal(t, h.acct.MerchantUUID, w2["merchant_uuid"])
	r = h.do(t, http.MethodPost, walletPath, "", with(body, map[string]any{"merchant_uuid": "not-a-merchant"}))
	assert.Equal(t, http.StatusNotFound, r.status)
	r = h.do(t, http.MethodPost, walletPath, "", with(body, map[string]any{"currency": "COP"}))
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "wallets: BRL, MXN, CLP, ARS")
	assert.Equal(t, "CURRENCY_NOT_SUPPORTED", r.code(t))

	r = h.do(t, http.MethodPost, walletPath, keyN("quickstart", 0), `{"name": "My First Wallet"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	q := r.obj(t)
	assert.True(t, strings.HasPrefix(q["uuid"].(string), "wal_"), "%v", q)
	assert.Equal(t, "My First Wallet", q["name"])
	assert.Equal(t, "active", q["status"])
	assert.NotContains(t, q, "wallet_uuid")
	pix := h.create(t, chargePath, h.body("pix", map[string]any{"wallet_uuid": q["uuid"]}))
	assert.Equal(t, q["uuid"], pix["wallet_uuid"])

	var keys []string
	for k := range q {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"uuid", "name", "status", "created_at"}, keys)
	r = h.do(t, http.MethodPost, walletPath, "", `{"name": 7}`)
	assert.Equal(t, http.StatusBadRequest, r.status)
}

// The accounts the fake starts with are served to any client language
// (GET /_fakepay/a55/accounts) and stay across a reset.
func TestAccounts(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	r := h.admin(t, http.MethodGet, "/_fakepay/a55/accounts", nil)
	require.Equal(t, http.StatusOK, r.status)
	var out struct {
		Accounts []a55fake.Account `json:"accounts"`
	}
	require.NoError(t, json.Unmarshal(r.body, &out))
	assert.Equal(t, []a55fake.Account{h.acct}, out.Accounts)
	h.e.Reset()
	assert.Equal(t, []a55fake.Account{h.acct}, h.f.Accounts())
	assert.Equal(t, "issued", h.create(t, chargePath, h.body("pix", nil))["status"], "the wallet is back after a reset")
}

// GET /api/v1/bank/wallet/ (the get-wallet page) finds one of the
// client's wallets by wallet_uuid, email or customer_id (at least one,
// several combined), narrowed by currency, and answers it in
// create-wallet's shape, never with credentials. A query without any of
// the three is 422 naming them; a wallet of another client is 403, none
// 404; a query several wallets match is 422: the fake never picks one.
func TestGetWallet(t *testing.T) {
	h := newHarness(t, a55fake.Config{Clients: map[string]string{"demo-client": "demo-secret", "other": "other-secret"}})
	body := map[string]any{"entity_uuid": h.acct.EntityUUID, "customer_id": "cust_12345", "currency": "BRL", "name": "Loja BRL",
		"email": "fin@loja.example", "create_credentials": true}
	r := h.do(t, http.MethodPost, walletPath, "", body)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	brl := r.obj(t)
	r = h.do(t, http.MethodPost, walletPath, "", with(body, map[string]any{"currency": "MXN", "name": "Loja MXN", "create_credentials": false}))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	mxn := r.obj(t)

	get := func(q url.Values) reply { return h.do(t, http.MethodGet, walletPath+"?"+q.Encode(), "", nil) }
	for _, q := range []url.Values{
		{"wallet_uuid": {brl["wallet_uuid"].(string)}},
		{"customer_id": {"cust_12345"}, "currency": {"BRL"}},
		{"email": {"fin@loja.example"}, "currency": {"BRL"}},
		{"wallet_uuid": {brl["wallet_uuid"].(string)}, "email": {"fin@loja.example"}, "customer_id": {"cust_12345"}},
	} {
		r := get(q)
		require.Equal(t, http.StatusOK, r.status, "%v: %s", q, r.body)
		w := r.obj(t)
		assert.Equal(t, brl["wallet_uuid"], w["wallet_uuid"], "%v", q)
		delete(brl, "credentials")
		assert.Equal(t, brl, w, "%v: create-wallet's shape, no credentials", q)
		assert.NotContains(t, string(r.body), "sec_", "%v: never the secret", q)
	}
	r = get(url.Values{"customer_id": {"cust_12345"}, "currency": {"MXN"}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, mxn["wallet_uuid"], r.obj(t)["wallet_uuid"])

	r = get(url.Values{"customer_id": {"cust_12345"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "two wallets match: %s", r.body)
	assert.Equal(t, []string{"customer_id"}, r.details(t))
	for _, q := range []url.Values{{}, {"currency": {"BRL"}}, {"wallet_uuid": {""}}} {
		r = get(q)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%v: %s", q, r.body)
		assert.ElementsMatch(t, []string{"wallet_uuid", "email", "customer_id"}, r.details(t), "%v", q)
	}
	r = get(url.Values{"wallet_uuid": {h.acct.WalletUUID}, "merchant_uuid": {h.acct.MerchantUUID}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{"merchant_uuid"}, r.details(t), "not a parameter of get-wallet")
	r = get(url.Values{"email": {"not an e-mail"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{"email"}, r.details(t))
	r = get(url.Values{"wallet_uuid": {h.acct.WalletUUID}, "currency": {"COP"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, "CURRENCY_NOT_SUPPORTED", r.code(t))

	other, _ := h.f.AccountOf("other")
	r = get(url.Values{"wallet_uuid": {other.WalletUUID}})
	assert.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
	r = get(url.Values{"wallet_uuid": {"wal_unknown"}})
	assert.Equal(t, http.StatusNotFound, r.status)
	r = get(url.Values{"customer_id": {"cust_nobody"}})
	assert.Equal(t, http.StatusNotFound, r.status)
	r = get(url.Values{"wallet_uuid": {brl["wallet_uuid"].(string)}, "currency": {"MXN"}})
	assert.Equal(t, http.StatusNotFound, r.status, "the wallet is in BRL")

	// The account's own wallet, and a quickstart wallet by its "wal_" id.
	r = get(url.Values{"wallet_uuid": {h.acct.WalletUUID}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, h.acct.MerchantUUID, r.obj(t)["merchant_uuid"])
	q := h.do(t, http.MethodPost, walletPath, "", `{"name": "My First Wallet"}`).obj(t)
	r = get(url.Values{"wallet_uuid": {q["uuid"].(string)}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, q["uuid"], r.obj(t)["wallet_uuid"], "the get-wallet page's spelling")

	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		assert.Equal(t, http.StatusMethodNotAllowed, h.do(t, m, walletPath, "", nil).status, m)
	}
	assert.Empty(t, h.e.Ledger().Operations()[3:], "reads run nothing")
}
