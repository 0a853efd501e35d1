package a55fake_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// list returns the IDs a list query answers, and the answer.
func (h *harness) list(t *testing.T, q url.Values) ([]string, map[string]any) {
	t.Helper()
	r := h.do(t, http.MethodGet, listPath+"?"+q.Encode(), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s: %s", q.Encode(), r.body)
	out := r.obj(t)
	var ids []string
	for _, c := range out["charges"].([]any) {
		ids = append(ids, c.(map[string]any)["charge_uuid"].(string))
	}
	return ids, out
}

// Every filter of the list-charges page: merchant, dates, status, type,
// card brand, amount range, sort and paging; the fake's own
// idempotency_key and description.
func TestListFilters(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	visa := h.create(t, chargePath, h.body("credit_card", card("4024007153763191")))["charge_uuid"].(string)
	h.e.Clock().Advance(time.Hour)
	master := h.create(t, chargePath, h.body("credit_card", with(card("5555555555554444"),
		map[string]any{"installment_value": json.Number("2000.00")})))["charge_uuid"].(string)
	h.e.Clock().Advance(24 * time.Hour)
	pix := h.do(t, http.MethodPost, chargePath, keyN("list-pix", 0), h.body("pix", map[string]any{"description": "order 7"})).obj(t)["charge_uuid"].(string)
	w := h.acct.WalletUUID
	q := func(kv ...string) url.Values {
		v := url.Values{"wallet_uuid": {w}}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		q    url.Values
		want []string
	}{
		{q(), []string{visa, master, pix}},
		{q("sort", "created:desc"), []string{pix, master, visa}},
		{q("sort", "created:asc"), []string{visa, master, pix}},
		{q("filter", "status:confirmed"), []string{visa, master}},
		{q("filter", "status:issued"), []string{pix}},
		{q("filter", "type:credit"), []string{visa, master}},
		{q("filter", "type:pix"), []string{pix}},
		{q("filter", "card_brand:Visa"), []string{visa}},
		{q("filter", "card_brand:mastercard"), []string{master}},
		{q("filter", "amount_gte:1000"), []string{master}},
		{q("filter", "amount_lte:150.00"), []string{visa, pix}},
		{q("filter", "amount_gte:100", "filter", "amount_lte:200"), []string{visa, pix}},
		{q("filter", "status:confirmed,card_brand:Visa"), []string{visa}},
		{q("merchant_uuid", h.acct.MerchantUUID), []string{visa, master, pix}},
		{q("merchant_uuid", "someone-else"), nil},
		{q("date_start", start.Add(30*time.Minute).Format(time.RFC3339)), []string{master, pix}},
		{q("date_end", start.Format(time.DateOnly)), []string{visa, master}},
		{q("date_start", "2030-03-15", "date_end", "2030-03-15"), []string{pix}},
		{q("limit", "2"), []string{visa, master}},
		{q("limit", "2", "page", "2"), []string{pix}},
		{q("limit", "2", "page", "9"), nil},
		{q("idempotency_key", keyN("list-pix", 0)), []string{pix}},
		{q("description", "order 7"), []string{pix}},
	} {
		ids, out := h.list(t, tc.q)
		assert.Equal(t, tc.want, ids, tc.q.Encode())
		assert.Contains(t, out, "total")
		assert.Contains(t, out, "page")
		assert.Contains(t, out, "limit")
	}
	_, out := h.list(t, q("limit", "2"))
	assert.Equal(t, json.Number("3"), out["total"])
	assert.Equal(t, json.Number("20"), h.do(t, http.MethodGet, listPath+"?wallet_uuid="+w, "", nil).obj(t)["limit"])

	for _, bad := range []url.Values{
		{}, q("limit", "0"), q("limit", "101"), q("page", "0"), q("sort", "amount:desc"), q("filter", "status:lost"),
		q("filter", "type:cash"), q("filter", "amount_gte:1.001"), q("filter", "brand:Visa"), q("filter", "status"),
		q("date_start", "yesterday"),
	} {
		r := h.do(t, http.MethodGet, listPath+"?"+bad.Encode(), "", nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", bad.Encode(), r.body)
	}
	r := h.do(t, http.MethodGet, listPath+"?wallet_uuid=unknown", "", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
}
