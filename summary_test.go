package payonce_test

import (
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A journaled call stores its request's summary, redacted, in the entry
// it reserves; a call without a reference stores nothing anywhere.
func TestJournalEntryHoldsTheRequestSummary(t *testing.T) {
	s := newStub(t, okCharge)
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	req := chargeReq("42.00")
	req.Summary = map[string]string{"amount": "42.00", "description": "order 42, card 4111111111111111"}
	_, err := c.Do(t.Context(), req, &chargeOut{}, payonce.WithReference("order-42/charge"))
	require.NoError(t, err)
	e, err := j.Get(t.Context(), "a55:client-1", "order-42/charge")
	require.NoError(t, err)
	assert.JSONEq(t, `{"amount":"42.00","description":"order 42, card ************1111"}`, e.Summary)
	assert.NotContains(t, e.Summary, "4111111111111111")

	bare := chargeReq("43.00")
	_, err = c.Do(t.Context(), bare, &chargeOut{}, payonce.WithReference("order-43/charge"))
	require.NoError(t, err)
	e, err = j.Get(t.Context(), "a55:client-1", "order-43/charge")
	require.NoError(t, err)
	assert.Empty(t, e.Summary)
}

// A summary that is not a JSON object, or longer than 4096 bytes, is
// refused before any byte is sent.
func TestJournalRefusesABadSummary(t *testing.T) {
	s := newStub(t, okCharge)
	c := journalClient(t, s, journal.NewMemory(), newClock())
	for name, sum := range map[string]any{
		"not an object": []string{"a"},
		"too long":      map[string]string{"description": strings.Repeat("x", corekit.MaxSummaryLen)},
		"unencodable":   map[string]any{"f": func() {}},
	} {
		req := chargeReq("44.00")
		req.Summary = sum
		_, err := c.Do(t.Context(), req, &chargeOut{}, payonce.WithReference("order-44/"+strings.ReplaceAll(name, " ", "-")))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, name)
		assert.NotEmpty(t, payonce.KeyOf(err), name)
	}
	assert.Zero(t, s.calls.Load())
}
