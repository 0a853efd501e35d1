package a55_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// A server that answers every page with the first one (it ignores the
// page parameter) while it claims more pages cannot be read to its end:
// All must end with ErrMalformedResponse, never as if the list were
// complete, or SettleCreate finds no charge among pages it never read
// (and, with RecordNotExecuted, records the create not executed) and
// a55reconcile reports on part of the list. Coinepay's Cards.All ends so.
func TestChargesAllRefusesAListThatRepeatsAPage(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[{"charge_uuid":"x","status":"confirmed"},{"charge_uuid":"y","status":"confirmed"}],"total_pages":1000}`))
	}))
	defer ts.Close()
	c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(ts.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	c = c.WithAccount(testAccount)
	var ids []string
	var errs []error
	for ch, err := range c.Charges.All(context.Background(), &a55.ChargeListOptions{Limit: 2}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, ch.UUID)
	}
	assert.Equal(t, []string{"x", "y"}, ids)
	require.Len(t, errs, 1, "the list ends with an error, not as if complete")
	require.ErrorIs(t, errs[0], payonce.ErrMalformedResponse)
}
