package fakeserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// POST /_fakepay/faults cannot grow the rule set (and the answer of GET
// /_fakepay/faults, and the scan every request makes) without bound: past
// MaxFaultRules rules, or with a field over MaxRuleField bytes, a rule is
// refused with 400 invalid_rule.
func TestAdminFaultRulesAreBounded(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	long := strings.Repeat("k", MaxRuleField+1)
	for _, body := range []string{
		`{"fault":"hang","path":"/` + long + `"}`,
		`{"fault":"hang","idempotency_key":"` + long + `"}`,
		`{"fault":"hang","provider":"` + long + `"}`,
	} {
		status, v := do(t, http.MethodPost, srv.URL+AdminPrefix+"faults", "", body)
		require.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_rule", v["error"].(map[string]any)["code"])
	}
	assert.Empty(t, e.Faults().Rules())
	for i := range MaxFaultRules {
		require.NoError(t, e.Faults().Add(Rule{Fault: Hang, IdempotencyKey: fmt.Sprint("key-", i)}))
	}
	status, v := do(t, http.MethodPost, srv.URL+AdminPrefix+"faults", "", `{"fault":"hang","idempotency_key":"one-more"}`)
	require.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_rule", v["error"].(map[string]any)["code"])
	assert.Len(t, e.Faults().Rules(), MaxFaultRules)
	do(t, http.MethodDelete, srv.URL+AdminPrefix+"faults", "", "")
	status, _ = do(t, http.MethodPost, srv.URL+AdminPrefix+"faults", "", `{"fault":"hang","idempotency_key":"after-clear"}`)
	assert.Equal(t, http.StatusCreated, status)
}
