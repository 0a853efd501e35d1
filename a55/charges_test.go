package a55_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A charge redirected to another host never reaches it: no bearer token,
// no key, no card; the error is final and carries the key.
func TestChargeRedirectToAnotherOriginIsRefused(t *testing.T) {
	var stolen atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		_, _ = io.WriteString(w, `{"charge_uuid":"evil","status":"confirmed"}`)
	}))
	defer evil.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c, err := a55.NewClient(a55.AccessToken("tok-SECRET"), payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Charges.Create(context.Background(), seedCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, key("redirect"))))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRedirectRefused)
	assert.False(t, payonce.IsTemporary(err))
	assert.Equal(t, key("redirect"), payonce.KeyOf(err).ID())
	assert.Zero(t, stolen.Load())
}
