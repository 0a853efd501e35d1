package a55_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/luhn"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// Every last digit of the sandbox table, through the client: the status,
// the typed error, the code, and the charge still reachable.
func TestTestCardOutcomeByLastDigit(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	for _, tc := range []struct {
		digit int
		kind  error // nil: confirmed
		code  string
	}{
		{0, nil, ""}, {1, nil, ""}, {4, nil, ""},
		{2, a55.ErrCardDeclined, a55.CodeNotAuthorized},
		{3, a55.ErrCardDeclined, a55.CodeExpiredCard},
		{5, a55.ErrCardDeclined, a55.CodeBlockedCard},
		{7, a55.ErrCardDeclined, a55.CodeCanceledCard},
		{6, a55.ErrChargeFailed, a55.CodeTimeout},
		{8, a55.ErrChargeFailed, a55.CodeCardProblem},
	} {
		t.Run(fmt.Sprint(tc.digit), func(t *testing.T) {
			number := a55test.TestCard(tc.digit)
			require.True(t, luhn.Valid(number))
			require.Equal(t, byte('0'+tc.digit), number[len(number)-1])
			k := key(fmt.Sprintf("digit-%d", tc.digit))
			ch, err := c.Charges.Create(ctx, refCharge(t, number), payonce.WithKey(keytest.Now(t, k)))
			if tc.kind == nil {
				require.NoError(t, err)
				assert.Equal(t, a55.StatusConfirmed, ch.Status)
				assert.True(t, srv.Ledger().ExecutedOnce(k))
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			for _, other := range []error{a55.ErrCardDeclined, a55.ErrChargeFailed} {
				if other != tc.kind {
					assert.NotErrorIs(t, err, other)
				}
			}
			failed, ok := a55.ChargeFromError(err)
			require.True(t, ok)
			assert.Equal(t, a55.StatusError, failed.Status)
			assert.Equal(t, []string{tc.code}, failed.Messages.Codes())
			assert.Equal(t, k, payonce.KeyOf(err).String())
			assert.False(t, payonce.IsTemporary(err))
			assert.NotContains(t, err.Error(), number)
			assert.Equal(t, 0, srv.Ledger().Count(k), "a failed charge is not in the ledger")
		})
	}
}

// A number ending in 9 confirms or times out at random, but always the
// same way for the same key; both outcomes occur.
func TestTestCardNineIsDeterministicPerKey(t *testing.T) {
	_, c := newFake(t)
	ctx := context.Background()
	number := a55test.TestCard(9)
	seen := map[bool]int{}
	for i := range 16 {
		k := key(fmt.Sprintf("nine-%d", i))
		_, first := c.Charges.Create(ctx, refCharge(t, number), payonce.WithKey(keytest.Now(t, k)))
		_, again := c.Charges.Create(ctx, refCharge(t, number), payonce.WithKey(keytest.Now(t, k)))
		require.Equal(t, first == nil, again == nil, "key %s drew two outcomes", k)
		if first != nil {
			require.ErrorIs(t, first, a55.ErrChargeFailed)
			ch, ok := a55.ChargeFromError(first)
			require.True(t, ok)
			require.Equal(t, []string{a55.CodeTimeout}, ch.Messages.Codes())
		}
		seen[first == nil]++
	}
	assert.Positive(t, seen[true], "some keys confirm")
	assert.Positive(t, seen[false], "some keys time out")
}

// The numbers the project always documented keep their answers whatever
// their last digit says (4000000000000069 ends in 9 but always errors,
// with PROCESSING_ERROR: retried under its key as A55 asks, until the
// attempts run out, resumable).
func TestDocumentedTestCardsKeepTheirAnswers(t *testing.T) {
	_, c := newFake(t)
	ctx := context.Background()
	for i := range 8 {
		k := key(fmt.Sprintf("proc-%d", i))
		_, err := c.Charges.Create(ctx, refCharge(t, a55test.CardProcError), payonce.WithKey(keytest.Now(t, k)))
		require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
		require.NotErrorIs(t, err, a55.ErrChargeFailed)
		require.True(t, payonce.IsResumable(err))
		require.Equal(t, k, payonce.KeyOf(err).String())
		var ae *payonce.APIError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "PROCESSING_ERROR", ae.Code)
		require.Equal(t, fastPolicy().MaxAttempts, ae.Attempts)
	}
	_, err := c.Charges.Create(ctx, refCharge(t, a55test.CardDeclined))
	require.ErrorIs(t, err, a55.ErrCardDeclined)
	ch, _ := a55.ChargeFromError(err)
	require.Equal(t, []string{"CARD_DECLINED"}, ch.Messages.Codes())
	ok, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	require.Equal(t, a55.StatusConfirmed, ok.Status)
}

func TestTestCardRejectsBadDigit(t *testing.T) {
	assert.Empty(t, a55test.TestCard(-1))
	assert.Empty(t, a55test.TestCard(10))
}
