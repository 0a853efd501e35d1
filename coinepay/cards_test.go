package coinepay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// A job that forgets its key: without WithExplicitKeys each delivery makes
// up a random key and Coinepay issues a card each time; with it the first
// delivery is refused before anything is sent.
func TestApplyRedeliveredWithoutAKey(t *testing.T) {
	apply := func(client *coinepay.Client) error {
		_, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
		return err
	}
	t.Run("default", func(t *testing.T) {
		srv := coinepaytest.New(t)
		client, err := srv.Client()
		require.NoError(t, err)
		require.NoError(t, apply(client))
		require.NoError(t, apply(client)) // the queue delivers the job again
		assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "two cards for one job")
	})
	t.Run("explicit keys", func(t *testing.T) {
		srv := coinepaytest.New(t)
		client, err := srv.Client(payonce.WithExplicitKeys())
		require.NoError(t, err)
		err = apply(client)
		require.ErrorIs(t, err, payonce.ErrKeyRequired)
		assert.Empty(t, srv.Requests(), "nothing sent")
		assert.Zero(t, srv.Ledger().Len())

		// The same job with its task key runs once however often it comes.
		key, err := payonce.NewKey(srv.Clock().Now(), "openapi:apply", "job-42")
		require.NoError(t, err)
		for range 2 {
			_, err := client.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, payonce.WithKey(key))
			require.NoError(t, err)
		}
		assert.Equal(t, 1, srv.Ledger().Count("openapi:apply:job-42"))
		// Recharge is a keyed write too.
		amount := payoncetest.Amount("1.00")
		_, err = client.Cards.Recharge(context.Background(), &coinepay.RechargeRequest{CardID: "c_1", Amount: amount})
		require.ErrorIs(t, err, payonce.ErrKeyRequired)
	})
}

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
	assert.Equal(t, "apply-redirect-1", payonce.KeyOf(err).String())
	assert.Zero(t, stolen.Load())
}

// Every refusal of bad input before sending names the field once, matches
// its specific kind and also payonce.ErrInvalidRequest, and sends nothing.
func TestValidationErrorsTextAndKinds(t *testing.T) {
	c, _, seen := setup(t)
	ctx := context.Background()
	key := payonce.WithKey(keytest.Now(t, "recharge-0001"))
	cases := []struct {
		name string
		call func() error
		kind error
		text string
	}{
		{"zero amount", func() error {
			_, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{CardID: "card_1"}, key)
			return err
		}, payonce.ErrInvalidAmount, "cards.recharge: invalid amount: must be greater than 0.00 ["},
		{"no card id", func() error {
			_, err := c.Cards.Recharge(ctx, &coinepay.RechargeRequest{Amount: mustAmount(t, "1.00")}, key)
			return err
		}, payonce.ErrInvalidRequest, "cards.recharge: invalid request: card_id: required ["},
		{"nil apply", func() error {
			_, err := c.Cards.Apply(ctx, nil, key)
			return err
		}, payonce.ErrInvalidRequest, "cards.apply: invalid request: nil request ["},
		{"no key", func() error {
			_, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"}, payonce.WithoutKey())
			return err
		}, payonce.ErrKeyRequired, "idempotency key required"},
		{"key too long", func() error {
			_, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"}, payonce.WithKey(keytest.Now(t, strings.Repeat("k", 129))))
			return err
		}, payonce.ErrKeyTooLong, "idempotency key too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			assert.ErrorIs(t, err, payonce.ErrInvalidRequest, "every refusal of input is an invalid request")
			assert.Contains(t, err.Error(), tc.text)
			assert.NotContains(t, err.Error(), "amount: amount")
			var ae *payonce.APIError
			require.True(t, errors.As(err, &ae))
			assert.False(t, payonce.IsResumable(err))
		})
	}
	assert.Empty(t, seen(), "nothing is sent for refused input")
}
