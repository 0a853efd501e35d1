package coinepay_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/keytest"
)

// An apply redirected to another host never reaches it: no X-Api-Key, no
// signature, no key; the error is final and carries the key.
func TestApplyRedirectToAnotherOriginIsRefused(t *testing.T) {
	var stolen atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		_, _ = io.WriteString(w, `{"code":0,"data":{"card_id":"evil"}}`)
	}))
	defer evil.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusPermanentRedirect)
	}))
	defer srv.Close()
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
		payonce.WithKey(keytest.Now(t, "apply-redirect-1")), payonce.WithHeader("X-Correlation-Id", "corr-1"))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRedirectRefused)
	assert.False(t, payonce.IsTemporary(err))
	assert.Equal(t, "apply-redirect-1", payonce.KeyOf(err).ID())
	assert.Zero(t, stolen.Load())
}
