package payonce_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rowText is every stored column of an entry, as one string.
func rowText(t *testing.T, e payonce.JournalEntry) string {
	t.Helper()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return string(b) + string(e.Result)
}

// A hostile server names the CVV with a prefix or suffix ("card_cvv",
// "cardCvc", "cvv_code", "card_pin") and writes the card number as a JSON
// number in any notation: no row keeps them, in the result or in the
// error text.
func TestJournalRowHoldsNoPrefixedSecretOrNumberInOtherNotation(t *testing.T) {
	const success = `{"id":"ch_1","status":"confirmed","card_cvv":"987","cardCvc":"987","cvv_code":"987","card_pin":"987",` +
		`"e":4.111111111111111e15,"E":4111111111111111E0,"neg":-4111111111111111,"f":4111111111111111.0,"amount":100.5,"big":12345678901234567890123}`
	s := newStub(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(payonce.HeaderIdempotencyKey) == "hostile-400-key-0001" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"INVALID","message":"refused card_cvv=987, cardCvc: 987 and card_pin='987'"}}`)
			return
		}
		_, _ = io.WriteString(w, success)
	})
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	ctx := t.Context()
	var out map[string]any
	_, err := c.Do(ctx, chargeReq("10.00"), &out, payonce.WithReference("ok"), payonce.WithIdempotencyKey("hostile-ok-key-0001"))
	require.NoError(t, err)
	_, err = c.Do(ctx, chargeReq("10.00"), nil, payonce.WithReference("bad"), payonce.WithIdempotencyKey("hostile-400-key-0001"))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)

	for _, ref := range []string{"ok", "bad"} {
		e, err := j.Get(ctx, "a55:client-1", ref)
		require.NoError(t, err)
		row := rowText(t, e)
		assert.NotContains(t, row, "987", ref)
		assert.NotRegexp(t, `4\.?111111111111111`, row, ref)
	}
	ok, err := j.Get(ctx, "a55:client-1", "ok")
	require.NoError(t, err)
	// What is not a card number passes through unchanged.
	assert.Contains(t, string(ok.Result), `"amount":100.5`)
	assert.Contains(t, string(ok.Result), `"big":12345678901234567890123`)
}

var _ = context.Background
