package coinepay_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
)

// A server that answers every page with the first one (it ignores the
// page parameter, or the list moved by a whole page between two reads)
// cannot be read to its end: All ends with ErrMalformedResponse, never
// as if the list were complete. A lookup or a reconcile that took the
// pages read for the whole list would miss the cards past them.
func TestAllRefusesAListThatRepeatsAPage(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("GET "+coinepay.PathCardList, func(w http.ResponseWriter, r *http.Request) {
		list := []map[string]any{{"card_id": "card_0"}, {"card_id": "card_1"}, {"card_id": "card_2"}}
		writeEnvelope(w, 200, "success", "成功", map[string]any{"items": list, "total": 7, "page": 1, "page_size": 3})
	})
	var ids []string
	var errs []error
	for card, err := range c.Cards.All(context.Background(), &coinepay.ListOptions{PageSize: 3}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, card.CardID)
	}
	assert.Equal(t, []string{"card_0", "card_1", "card_2"}, ids)
	require.Len(t, errs, 1, "the list ends with an error, not as if complete")
	require.ErrorIs(t, errs[0], payonce.ErrMalformedResponse)
}
