package a55fake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A delivery without attempts (blocked, or a resend not yet attempted)
// lists "attempts": [] as documented, never null.
func TestWebhookAdminAttemptsNeverNull(t *testing.T) {
	h := newEvictHarness(t, 0)
	st, out := h.do(t, http.MethodPost, walletPrefix+"charge/", "webhook-admin-key-0001",
		map[string]any{"amount": "1.00", "currency": "BRL", "type_charge": "pix", "webhook_url": "https://example.com/hook"})
	require.Equal(t, http.StatusOK, st, out)
	admin := h.f.AdminHandler(http.NotFoundHandler())

	rec := httptest.NewRecorder()
	admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, WebhookAdminPrefix, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var list struct {
		Deliveries []map[string]json.RawMessage `json:"deliveries"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	require.Len(t, list.Deliveries, 1)
	assert.JSONEq(t, `"blocked"`, string(list.Deliveries[0]["state"]))
	assert.JSONEq(t, `[]`, string(list.Deliveries[0]["attempts"]))

	rec = httptest.NewRecorder()
	body := `{"charge_uuid":"` + out["charge_uuid"].(string) + `"}`
	admin.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, WebhookAdminPrefix+"/resend", strings.NewReader(body)))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var resent struct {
		Delivery map[string]json.RawMessage `json:"delivery"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resent))
	assert.JSONEq(t, `[]`, string(resent.Delivery["attempts"]))
}
