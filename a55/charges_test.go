package a55_test

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
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/payoncetest"
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
	_, err = c.WithAccount(testAccount).Charges.Create(context.Background(), refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, key("redirect"))))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrRedirectRefused)
	assert.False(t, payonce.IsTemporary(err))
	assert.Equal(t, key("redirect"), payonce.KeyOf(err).String())
	assert.Zero(t, stolen.Load())
}

// Capture, partial and full refund and cancel, each through a lost
// response, a 503 and a connection reset, with exactly one ledger entry per
// operation; then the moves A55 refuses, each through the same faults.

var faults = []struct {
	name string
	rule func(path string) payoncetest.Rule
}{
	{"lost response", func(p string) payoncetest.Rule {
		return payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: p, Count: 1}
	}},
	{"503", func(p string) payoncetest.Rule {
		return payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: p, Count: 1, Status: 503}
	}},
	{"reset", func(p string) payoncetest.Rule {
		return payoncetest.Rule{Fault: payoncetest.FaultResetBeforeRead, Path: p, Count: 1}
	}},
}

// walletRequest is a create-wallet request in the reference's form.
func walletRequest(name string) *a55.WalletCreateRequest {
	return &a55.WalletCreateRequest{EntityUUID: "550e8400-e29b-41d4-a716-446655440000", CustomerID: "cust_" + name,
		Currency: payonce.BRL, Name: name, Email: "financeiro@loja.example"}
}

// refundPath and cancelPath are the paths of a refund and a cancel of
// charge in wallet.
func refundPath(charge, wallet string) string {
	return a55.PathCharges + charge + "/refund/" + wallet + "/"
}
func cancelPath(charge, wallet string) string {
	return a55.PathCharges + charge + "/cancel/" + wallet + "/"
}

func TestMovesThroughFaults(t *testing.T) {
	ctx := context.Background()
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv, c := newFake(t)
			led := srv.Ledger()

			// Wallet, then a pre-authorised charge in it.
			require.NoError(t, srv.AddFault(f.rule(a55test.WalletPath)))
			w, err := c.Wallets.Create(ctx, walletRequest("store-1"), payonce.WithKey(keytest.Now(t, key("wallet"))))
			require.NoError(t, err)
			assert.Equal(t, 2, w.Meta.Attempts)
			assert.Equal(t, 1, led.Count(key("wallet")))

			req := preauth(t)
			req.WalletUUID, req.MerchantID = w.UUID, w.MerchantUUID // the merchant A55 made for the wallet
			require.NoError(t, srv.AddFault(f.rule(a55test.ChargePath)))
			ch, err := c.Charges.Create(ctx, req, payonce.WithKey(keytest.Now(t, key("create"))))
			require.NoError(t, err)
			assert.Equal(t, a55.StatusConfirmed, ch.Status, "authorised, nothing captured yet")
			assert.Equal(t, w.UUID, ch.WalletUUID)
			assert.Equal(t, 1, led.Count(key("create")))

			// Partial capture.
			require.NoError(t, srv.AddFault(f.rule(a55test.CapturePath)))
			ch, err = c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: ch.UUID, WalletUUID: w.UUID, Amount: amount(t, "80.00"), Currency: payonce.BRL},
				payonce.WithKey(keytest.Now(t, key("capture"))))
			require.NoError(t, err)
			assert.Equal(t, a55.StatusPaid, ch.Status)
			assert.Equal(t, 2, ch.Meta.Attempts)
			assert.Equal(t, 1, led.Count(key("capture")))

			// Partial refund, then the rest.
			require.NoError(t, srv.AddFault(f.rule(refundPath(ch.UUID, w.UUID))))
			ch, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, WalletUUID: w.UUID, Amount: amount(t, "30.00"), Reason: "partial"},
				payonce.WithKey(keytest.Now(t, key("refund-1"))))
			require.NoError(t, err)
			assert.Equal(t, a55.StatusPaid, ch.Status, "a partial refund keeps the status")
			assert.Equal(t, "50.00", ch.AmountRemaining.String())
			assert.Equal(t, 1, led.Count(key("refund-1")))

			require.NoError(t, srv.AddFault(f.rule(refundPath(ch.UUID, w.UUID))))
			ch, err = c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: ch.UUID, WalletUUID: w.UUID},
				payonce.WithKey(keytest.Now(t, key("refund-2"))))
			require.NoError(t, err)
			assert.Equal(t, a55.StatusRefunded, ch.Status)
			assert.True(t, ch.AmountRemaining.IsZero())
			assert.Equal(t, 1, led.Count(key("refund-2")))

			// Cancel another pre-authorised charge.
			other, err := c.Charges.Create(ctx, preauth(t))
			require.NoError(t, err)
			require.NoError(t, srv.AddFault(f.rule(cancelPath(other.UUID, other.WalletUUID))))
			ch, err = c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: other.UUID, WalletUUID: other.WalletUUID, Reason: "customer asked"},
				payonce.WithKey(keytest.Now(t, key("cancel"))))
			require.NoError(t, err)
			assert.Equal(t, a55.StatusCanceled, ch.Status)
			assert.Equal(t, 2, ch.Meta.Attempts)
			assert.Equal(t, 1, led.Count(key("cancel")))

			assert.Equal(t, 2, led.CountKind("charge.create"))
			assert.Equal(t, 1, led.CountKind("charge.capture"))
			assert.Equal(t, 2, led.CountKind("charge.refund"))
			assert.Equal(t, 1, led.CountKind("charge.cancel"))
		})
	}
}

func TestIllegalMoves(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	confirmed, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	canceled, err := c.Charges.Create(ctx, preauth(t))
	require.NoError(t, err)
	wallet := confirmed.WalletUUID
	_, err = c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: canceled.UUID, WalletUUID: wallet})
	require.NoError(t, err)
	before := srv.Ledger().Len()

	cases := []struct {
		name string
		path string
		call func() (*a55.Charge, error)
	}{
		{"cancel captured", cancelPath(confirmed.UUID, wallet), func() (*a55.Charge, error) {
			return c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: confirmed.UUID, WalletUUID: wallet})
		}},
		{"capture captured", a55test.CapturePath, func() (*a55.Charge, error) {
			return c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: confirmed.UUID, WalletUUID: wallet})
		}},
		{"refund too much", refundPath(confirmed.UUID, wallet), func() (*a55.Charge, error) {
			return c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: confirmed.UUID, WalletUUID: wallet, Amount: amount(t, "100.01")})
		}},
		{"cancel canceled", cancelPath(canceled.UUID, wallet), func() (*a55.Charge, error) {
			return c.Charges.Cancel(ctx, &a55.CancelRequest{ChargeUUID: canceled.UUID, WalletUUID: wallet})
		}},
		{"capture canceled", a55test.CapturePath, func() (*a55.Charge, error) {
			return c.Charges.Capture(ctx, &a55.CaptureRequest{ChargeUUID: canceled.UUID, WalletUUID: wallet})
		}},
		{"refund canceled", refundPath(canceled.UUID, wallet), func() (*a55.Charge, error) {
			return c.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: canceled.UUID, WalletUUID: wallet})
		}},
	}
	// Each illegal move through each fault: the fault makes the SDK retry
	// (a refusal is not stored, so the retry is refused again), then the
	// move is refused for good and nothing is executed.
	for _, f := range faults {
		for _, tc := range cases {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				require.NoError(t, srv.AddFault(f.rule(tc.path)))
				ch, err := tc.call()
				require.Error(t, err)
				assert.Nil(t, ch)
				assert.ErrorIs(t, err, a55.ErrInvalidState)
				assert.NotErrorIs(t, err, payonce.ErrIdempotencyConflict)
				assert.False(t, payonce.IsTemporary(err))
				var ae *payonce.APIError
				require.ErrorAs(t, err, &ae)
				assert.Contains(t, []int{http.StatusBadRequest, http.StatusConflict}, ae.StatusCode)
				assert.NotEmpty(t, ae.Key)
				assert.Equal(t, 2, ae.Attempts, "the fault, then the refusal")
				assert.Equal(t, before, srv.Ledger().Len(), "the illegal move was not executed")
			})
		}
	}
	assert.Equal(t, before, srv.Ledger().Len(), "no illegal move was executed")
	assert.Equal(t, len(faults)*len(cases), srv.Stats().Faults, "every fault fired")

	_, err = c.Charges.Get(ctx, "no-such-charge", wallet)
	assert.ErrorIs(t, err, payonce.ErrNotFound)
}
