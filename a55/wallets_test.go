package a55_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A55's public reference documents creating a wallet and no way to read
// or list wallets: the client offers Create only, and the fake serves no
// wallet read, so no test passes against an endpoint A55 may not have.
// docs/a55.md says what is documented.
func TestWalletsOfferOnlyWhatA55Documents(t *testing.T) {
	var methods []string
	ty := reflect.TypeOf(&a55.WalletsService{})
	for i := range ty.NumMethod() {
		methods = append(methods, ty.Method(i).Name)
	}
	assert.Equal(t, []string{"Create"}, methods)

	srv := a55test.New(t)
	for _, path := range []string{a55.PathWallets, a55.PathWallets + "?wallet_uuid=00000000-0000-4000-8000-000000000000"} {
		resp, err := srv.HTTPClient().Get(srv.URL + path)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, path)
	}
}
