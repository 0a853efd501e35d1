package payonce_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The observer hears that an answer came from the journal, a recorded
// failure too, and the reference's template, never the reference.
func TestObserverHearsAnswersFromTheJournal(t *testing.T) {
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"message_key":"openapi_invalid_request","message":"bad"}`)
	})
	var results []payonce.OperationResult
	var infos []payonce.OperationInfo
	c := journalClient(t, s, journal.NewMemory(), newClock(), payonce.WithObserver(payonce.Observer{
		StartOperation: func(ctx context.Context, info payonce.OperationInfo) context.Context {
			infos = append(infos, info)
			return ctx
		},
		EndOperation: func(_ context.Context, r payonce.OperationResult) { results = append(results, r) },
	}))
	for range 2 {
		_, err := c.Do(t.Context(), chargeReq("45.00"), &chargeOut{}, payonce.WithReference("order-45/charge"))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	}
	require.Len(t, results, 2)
	assert.False(t, results[0].FromJournal)
	assert.True(t, results[1].FromJournal, "the recorded failure, nothing sent")
	assert.EqualValues(t, 1, s.calls.Load())
	for _, info := range infos {
		assert.Equal(t, "order-{id}/charge", info.ReferenceTemplate)
	}
}
