package coinepay_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
)

// A card ID is an identifier, not a card number, even when its digits
// pass the Luhn check (about one ID of 13 to 19 digits in ten): the card
// answered from the journal is the card issued and paid for, while a card
// number the server echoed is masked in the row whatever it holds.
func TestCardIDComesBackFromTheJournalAsSent(t *testing.T) {
	for _, id := range []string{"4000056655665556", "5105 1051 0510 5100", "card_4111111111111111"} {
		t.Run(id, func(t *testing.T) {
			j := journal.NewMemory()
			c, mux, seen := setup(t, payonce.WithJournal(j))
			mux.HandleFunc("POST "+coinepay.PathCardApply, func(w http.ResponseWriter, r *http.Request) {
				writeEnvelope(w, 200, "success", "成功", map[string]any{"card_id": id, "header_id": "h1", "package_id": "p1",
					"balance": "0.00", "fee": "1.00", "account_balance": "99.00", "card_number": "4111111111111112", "cvv": "987",
					"request_id": "4000056655665556"})
			})
			req := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}
			first, err := c.Cards.Apply(t.Context(), req, payonce.WithReference("job-1/apply"), payonce.WithKey(keytest.Now(t, "apply-key-1")))
			require.NoError(t, err)
			again, err := c.Cards.Apply(t.Context(), req, payonce.WithReference("job-1/apply"))
			require.NoError(t, err)
			require.True(t, again.Meta.FromJournal)
			require.Len(t, seen(), 1)
			assert.Equal(t, id, first.CardID)
			assert.Equal(t, id, again.CardID, "the card issued")

			e, err := j.Get(t.Context(), c.Core().Scope(), "job-1/apply")
			require.NoError(t, err)
			assert.NotContains(t, string(e.Result), "4111111111111112")
			assert.NotContains(t, string(e.Result), "987")
			assert.Contains(t, string(e.Result), `"request_id":"4000056655665556"`)
		})
	}
}
