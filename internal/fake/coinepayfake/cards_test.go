package coinepayfake

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// A recharge that would take a card's balance past what the wire form
// holds is refused before anything moves: no wrap-around, no cut.
func TestRechargePastTheLargestAmountIsRefused(t *testing.T) {
	e := fakeserver.New(fakeserver.Options{})
	f := New(e, Config{})
	req := func(path, key, body string) *fakeserver.Request {
		return &fakeserver.Request{HTTP: httptest.NewRequest(http.MethodPost, path, nil), Key: key, Body: []byte(body), Credential: "demo-key"}
	}
	most := fakeserver.MustDecimal("999999999999999.99")
	require.NoError(t, f.SetBalance("demo-key", most))
	require.Equal(t, http.StatusOK, f.apply(req(PathApply, "a", `{"header_id":"h","package_id":"p"}`)).Status)
	id := f.order["demo-key"][0]
	require.NoError(t, f.SetBalance("demo-key", most))
	require.Equal(t, http.StatusOK, f.recharge(req(PathRecharge, "r1", `{"card_id":"`+id+`","amount":"999999999999999.99"}`)).Status)
	require.NoError(t, f.SetBalance("demo-key", most))
	resp := f.recharge(req(PathRecharge, "r2", `{"card_id":"`+id+`","amount":"0.01"}`))
	assert.Equal(t, http.StatusBadRequest, resp.Status)
	assert.Contains(t, string(resp.Body), `"message_key":"openapi_invalid_request"`)
	bal, _ := f.Balance("demo-key")
	assert.Equal(t, most, bal, "the account keeps its balance")
	assert.Equal(t, "999999999999999.99", f.cards[id].Balance.String(), "the card keeps its balance")
	assert.Zero(t, e.Ledger().Count("r2"), "nothing recorded")
}

// Amounts are read as Coinepay writes them, a decimal string with at most
// two places; anything else is openapi_invalid_request naming the form.
func TestRechargeAmountForms(t *testing.T) {
	e := fakeserver.New(fakeserver.Options{})
	f := New(e, Config{})
	r := &fakeserver.Request{HTTP: httptest.NewRequest(http.MethodPost, PathApply, nil), Key: "a",
		Body: []byte(`{"header_id":"h","package_id":"p"}`), Credential: "demo-key"}
	require.Equal(t, http.StatusOK, f.apply(r).Status)
	id := f.order["demo-key"][0]
	for body, status := range map[string]int{
		`"10.00"`: 200, `"10.5"`: 200, `10.25`: 200, `"10.123"`: 400, `"-1.00"`: 400, `"1e2"`: 400, `"0.00"`: 400, `null`: 400,
	} {
		r := &fakeserver.Request{HTTP: httptest.NewRequest(http.MethodPost, PathRecharge, nil), Key: "r" + body,
			Body: []byte(`{"card_id":"` + id + `","amount":` + body + `}`), Credential: "demo-key"}
		resp := f.recharge(r)
		assert.Equal(t, status, resp.Status, body)
		if status != 200 {
			assert.Contains(t, string(resp.Body), `"message_key":"openapi_invalid_request"`, body)
		}
	}
	assert.Equal(t, "30.75", f.cards[id].Balance.String(), "10.00 + 10.50 + 10.25, exactly")
}
