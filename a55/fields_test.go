package a55_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/payonce/payonce/redact"
)

// The identifiers of an A55 answer come back from the journal as sent,
// whatever their digits; its card data is masked, Luhn or not.
func TestAnswerFieldsKeepIdentifiersAndMaskCardData(t *testing.T) {
	body := `{"charge_uuid":"4000056655665556","wallet_uuid":"5105105105105100","uuid":4111111111111111,"request_id":"4000056655665556",` +
		`"card":{"number":"4111111111111112","cvv":"123","card_number":"5105 1051 0510 5109"},"card_cvv":"987"}`
	out := string(redact.JSONWith([]byte(body), a55.Codec{}.AnswerFields()))
	for _, kept := range []string{`"charge_uuid":"4000056655665556"`, `"wallet_uuid":"5105105105105100"`, `"uuid":4111111111111111`, `"request_id":"4000056655665556"`} {
		assert.Contains(t, out, kept)
	}
	for _, gone := range []string{"4111111111111112", `"123"`, "5105 1051 0510", "987"} {
		assert.NotContains(t, out, gone)
	}
}

// A charge whose UUID passes the Luhn check is answered from the journal
// with that UUID: the charge paid for.
func TestChargeUUIDComesBackFromTheJournalAsSent(t *testing.T) {
	const id = "4000056655665556"
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok-1","expires_in":3600,"token_type":"Bearer"}`)
	})
	calls := 0
	mux.HandleFunc("POST "+a55.PathCharges, func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"charge_uuid":%q,"wallet_uuid":"5105105105105100","status":"confirmed","amount":"10.00","currency":"BRL","type_charge":"pix"}`, id)
	})
	auth := a55.ClientCredentials("client-id", "client-secret-0123")
	auth.TokenURL = srv.URL + "/oauth2/token"
	c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), payonce.WithJournal(journal.NewMemory()))
	require.NoError(t, err)
	c = c.WithAccount(testAccount)
	amount, err := payonce.ParseAmount("10.00")
	require.NoError(t, err)
	req := chargeOf("10.00", "")
	req.TypeCharge, req.Card, req.InstallmentValue, req.WalletUUID, req.Description = a55.TypePix, nil, amount, "5105105105105100", "order 1"
	first, err := c.Charges.Create(t.Context(), req, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	again, err := c.Charges.Create(t.Context(), req, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	require.True(t, again.Meta.FromJournal)
	assert.Equal(t, 1, calls)
	assert.Equal(t, id, first.UUID)
	assert.Equal(t, id, again.UUID)
	assert.Equal(t, "5105105105105100", again.WalletUUID)
	assert.False(t, strings.Contains(fmt.Sprint(again.UUID), "*"))
}
