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
	"github.com/payonce/payonce/internal/keytest"
)

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
	ch, err := c.Charges.Create(ctx, &a55.ChargeCreateRequest{Amount: amt, Currency: payonce.BRL, TypeCharge: a55.TypePix},
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
