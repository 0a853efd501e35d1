package a55test_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/payoncetest"
)

func chargeReq(t *testing.T) *a55.ChargeCreateRequest {
	t.Helper()
	amount, err := payonce.ParseAmount("100.00")
	require.NoError(t, err)
	return a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}})
}

// The recipe "advance 25 h and resume" of docs/testing.md: the test client reads the
// fake's clock, so its key-age guard sees the 25 hours too and refuses to
// send a key the server has forgotten (which would charge a second time).
func TestClientKeyAgesWithTheFakeClock(t *testing.T) {
	srv := a55test.New(t)
	client, err := srv.Client()
	require.NoError(t, err)
	// Every answer is lost after the charge commits, and the charge list
	// that would find it is down: the operation fails with its key, in
	// doubt, and the customer has paid once.
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargesPath}))
	key, err := payonce.NewKey(srv.Clock().Now(), "order", "4242", "payment")
	require.NoError(t, err)
	_, err = client.Charges.Create(context.Background(), chargeReq(t), payonce.WithKey(key))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	require.Equal(t, 1, srv.Ledger().Count(key.String()))
	srv.ClearFaults()

	srv.Clock().Advance(25 * time.Hour)
	sent := len(srv.Requests())
	_, err = client.Charges.Create(context.Background(), chargeReq(t), payonce.WithKey(payonce.KeyOf(err)))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key, payonce.KeyOf(err))
	assert.Len(t, srv.Requests(), sent, "nothing sent")
	assert.Equal(t, 1, srv.Ledger().Count(key.String()), "charged once")
}

func TestClientTokenFollowsTheFakeClock(t *testing.T) {
	// The fake's tokens expire on its clock; the client's token cache
	// reads the same clock, so after Clock().Advance past the token's
	// lifetime the client fetches a new token before its next call
	// instead of sending the stale one and taking a 401.
	s := newFake(t)
	c, err := s.Client()
	require.NoError(t, err)
	ctx := context.Background()
	amt, err := payonce.ParseAmount("10.00")
	require.NoError(t, err)
	ch, err := c.Charges.Create(ctx, a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amt, Currency: payonce.BRL, TypeCharge: a55.TypePix}),
		payonce.WithKey(keytest.Key(t, "token-clock-key-0123456789", s.Clock().Now())))
	require.NoError(t, err)

	s.Clock().Advance(25 * time.Hour)
	before := len(s.Requests())
	_, err = c.Charges.Get(ctx, ch.UUID, "")
	require.NoError(t, err)
	after := s.Requests()[before:]
	var paths []string
	for _, a := range after {
		assert.NotEqual(t, http.StatusUnauthorized, a.Status, "%s %s answered 401", a.Method, a.Path)
		paths = append(paths, a.Method+" "+a.Path)
	}
	assert.Equal(t, []string{"POST " + a55test.TokenPath, "GET " + a55test.ChargePath}, paths)
}
