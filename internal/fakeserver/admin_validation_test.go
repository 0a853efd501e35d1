package fakeserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A fault rule or a filter that can never match is a mistake the caller
// must hear about: a misspelt field ("retryAfter") or an unknown provider
// would otherwise be accepted and the test would silently run without
// its fault.
func TestAdminRefusesRulesAndFiltersThatCannotMatch(t *testing.T) {
	_, srv := newTestServer(t, Options{})
	for _, body := range []string{
		`{"fault":"rate_limit","provider":"visa"}`,
		`{"fault":"rate_limit","retryAfter":5}`,
		`{"fault":"drop_after_commit","idempotencyKey":"k-1"}`,
	} {
		status, v := do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.NotNil(t, v["error"], body)
	}
	status, v := do(t, http.MethodGet, srv.URL+"/_fakepay/faults", "", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Empty(t, v["rules"], "no rule was added")

	// The attempt log holds only requests to the providers served. (The
	// ledger may also hold operations recorded directly, so its filter
	// stays free.)
	status, _ = do(t, http.MethodGet, srv.URL+"/_fakepay/requests?provider=visa", "", "")
	assert.Equal(t, http.StatusBadRequest, status)
	// The provider the engine serves is accepted everywhere.
	status, _ = do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", `{"fault":"rate_limit","provider":"test","delay":"1ms"}`)
	assert.Equal(t, http.StatusCreated, status)
	for _, q := range []string{"/_fakepay/ledger?provider=test", "/_fakepay/requests?provider=test"} {
		status, _ := do(t, http.MethodGet, srv.URL+q, "", "")
		assert.Equal(t, http.StatusOK, status, q)
	}
}

// A clock move that names both an advance and a time is ambiguous: one of
// them would be ignored without a word.
func TestAdminClockRefusesAdvanceAndSetTogether(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	before := e.clock.Now()
	status, v := do(t, http.MethodPost, srv.URL+"/_fakepay/clock", "", `{"advance":"1h","set":"2030-01-01T00:00:00Z"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.NotNil(t, v["error"])
	assert.Less(t, e.clock.Now().Sub(before), time.Hour, "the clock did not move")
}

// A well-formed body with a bad value is an invalid request, not malformed
// JSON, and its message says what is wrong once.
func TestAdminBadValueIsAnInvalidRequest(t *testing.T) {
	_, srv := newTestServer(t, Options{})
	status, v := do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", `{"fault":"delay","delay":"soon"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	e, _ := v["error"].(map[string]any)
	assert.Equal(t, "invalid_request", e["code"], v)
	status, v = do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", `{"fault":`)
	assert.Equal(t, http.StatusBadRequest, status)
	e, _ = v["error"].(map[string]any)
	assert.Equal(t, "invalid_json", e["code"], v)
}
