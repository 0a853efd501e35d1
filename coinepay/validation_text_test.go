package coinepay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/keytest"
)

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
