package a55_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A55's public reference documents creating a wallet and reading one
// (get-wallet: by wallet_uuid, email or customer_id), and no way to list
// or change wallets: the client offers Create and Get only, and the fake
// serves the read, refuses a query naming no wallet and answers every
// other method 405, so no test passes against an endpoint A55 may not
// have. docs/a55.md says what is documented.
func TestWalletsOfferOnlyWhatA55Documents(t *testing.T) {
	var methods []string
	ty := reflect.TypeOf(&a55.WalletsService{})
	for i := range ty.NumMethod() {
		methods = append(methods, ty.Method(i).Name)
	}
	assert.Equal(t, []string{"Create", "Get"}, methods)

	srv := a55test.New(t)
	client, err := srv.Client()
	require.NoError(t, err)
	w, err := client.Wallets.Get(context.Background(), &a55.WalletQuery{WalletUUID: srv.WalletUUID()})
	require.NoError(t, err)
	assert.Equal(t, srv.WalletUUID(), w.UUID)
	assert.Equal(t, srv.MerchantID(), w.MerchantUUID)
	before := srv.Stats().Requests
	_, err = client.Wallets.Get(context.Background(), &a55.WalletQuery{})
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Equal(t, before, srv.Stats().Requests, "refused before sending")

	resp, err := srv.HTTPClient().Get(srv.URL + a55.PathWallets)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, "the fake refuses a query naming no wallet")
	for _, m := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, err := http.NewRequest(m, srv.URL+a55.PathWallets+"?wallet_uuid="+srv.WalletUUID(), nil)
		require.NoError(t, err)
		resp, err := srv.HTTPClient().Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
	}
}
