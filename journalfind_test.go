package payonce_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resourceCodec is providerCodec naming the "id" of a charges.create
// answer as its resource.
type resourceCodec struct{ providerCodec }

func (resourceCodec) ResourceID(operation string, body []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	if operation != "charges.create" || json.Unmarshal(body, &v) != nil {
		return ""
	}
	return v.ID
}

// answering is a stub answering every request 200 with body.
func answering(t *testing.T, body string) *stub {
	return newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, body) })
}

// A success is recorded with the resource its answer names, which
// Holders then finds; an ID the journal's redaction would change, or too
// long to be one, is not kept.
func TestResourceIDIsRecordedWithTheOutcome(t *testing.T) {
	for name, tc := range map[string]struct{ id, want string }{
		"plain":       {"ch_42", "ch_42"},
		"uuid":        {"4f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4", "4f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4"},
		"card number": {"4111111111111111", ""},
		"too long":    {strings.Repeat("c", 256), ""},
	} {
		t.Run(name, func(t *testing.T) {
			j := journal.NewMemory()
			c := journalClient(t, answering(t, `{"id":"`+tc.id+`","status":"confirmed"}`), j, newClock(), payonce.WithTestCodec(resourceCodec{}))
			_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1"))
			require.NoError(t, err)
			e, err := j.Get(t.Context(), c.Scope(), "order-1")
			require.NoError(t, err)
			assert.Equal(t, tc.want, e.ResourceID)
			if tc.want != "" {
				got, err := j.Holders(t.Context(), c.Scope(), tc.want)
				require.NoError(t, err)
				require.Len(t, got, 1)
				assert.Equal(t, "order-1", got[0].Reference)
			}
		})
	}
	j := journal.NewMemory()
	c := journalClient(t, answering(t, `{"id":"ch_1"}`), j, newClock())
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1"))
	require.NoError(t, err)
	e, err := j.Get(t.Context(), c.Scope(), "order-1")
	require.NoError(t, err)
	assert.Empty(t, e.ResourceID, "a codec that names no resource")
}

// A settlement of a success records the resource its result names, and
// is refused, before the entry is taken, when another entry holds that
// resource as its outcome: one payment is one entry's.
func TestSettleRefusesAnotherEntrysResource(t *testing.T) {
	j := journal.NewMemory()
	clk := newClock()
	paid := journalClient(t, answering(t, `{"id":"ch_b","status":"confirmed"}`), j, clk, payonce.WithTestCodec(resourceCodec{}))
	_, err := paid.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-B"))
	require.NoError(t, err)
	inDoubt(t, j, clk, "order-A")
	c := journalClient(t, answering(t, `{}`), j, clk, payonce.WithTestCodec(resourceCodec{}))
	before, err := j.Get(t.Context(), c.Scope(), "order-A")
	require.NoError(t, err)

	_, err = c.Settle(t.Context(), "order-A", payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"id":"ch_b","status":"confirmed"}`), Reason: "found ch_b"})
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Contains(t, err.Error(), `"order-B"`)
	after, err := j.Get(t.Context(), c.Scope(), "order-A")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, after.State)
	assert.Equal(t, before.Fence, after.Fence, "refused before the entry is taken")

	e, err := c.Settle(t.Context(), "order-A", payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"id":"ch_a","status":"confirmed"}`), Reason: "found ch_a"})
	require.NoError(t, err)
	assert.Equal(t, "ch_a", e.ResourceID)
}

// noFinder is a journal without payonce.JournalFinder.
type noFinder struct{ payonce.Journal }

// Through a journal without JournalFinder a settlement is taken as
// given: nothing can be asked.
func TestSettleWithoutAFinderTakesTheSettlement(t *testing.T) {
	m := journal.NewMemory()
	clk := newClock()
	paid := journalClient(t, answering(t, `{"id":"ch_b"}`), m, clk, payonce.WithTestCodec(resourceCodec{}))
	_, err := paid.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-B"))
	require.NoError(t, err)
	inDoubt(t, m, clk, "order-A")
	c := journalClient(t, answering(t, `{}`), noFinder{m}, clk, payonce.WithTestCodec(resourceCodec{}))
	_, isFinder := any(noFinder{m}).(payonce.JournalFinder)
	require.False(t, isFinder)
	e, err := c.Settle(t.Context(), "order-A", payonce.Settlement{State: payonce.JournalSucceeded, Result: []byte(`{"id":"ch_b"}`), Reason: "by hand"})
	require.NoError(t, err)
	assert.Equal(t, "ch_b", e.ResourceID)
}
