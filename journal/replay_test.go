package journal_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
)

// A declined charge replayed from the journal still gives the charge
// (its UUID and status) through a55.ChargeFromError, as the first call did.
func TestDeclinedChargeReplayedFromTheJournalKeepsTheCharge(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j, _ := b.open(t)
			srv := a55test.New(t)
			c := a55Client(t, srv, j)
			_, first := c.Charges.Create(t.Context(), chargeRequest("4000000000000002"), payonce.WithReference("order-2/charge"))
			require.ErrorIs(t, first, a55.ErrCardDeclined)
			want, ok := a55.ChargeFromError(first)
			require.True(t, ok)

			_, again := c.Charges.Create(t.Context(), chargeRequest("4000000000000002"), payonce.WithReference("order-2/charge"))
			require.ErrorIs(t, again, a55.ErrCardDeclined)
			var fromJournal *payonce.APIError
			require.True(t, errors.As(again, &fromJournal) && fromJournal.FromJournal, "answered from the journal")
			got, ok := a55.ChargeFromError(again)
			require.True(t, ok, "the replayed error gives the charge")
			assert.Equal(t, want.UUID, got.UUID)
			assert.Equal(t, want.Status, got.Status)
			assert.Equal(t, payonce.KeyOf(first).String(), payonce.KeyOf(again).String())
			charges := 0
			for _, r := range srv.Requests() {
				if r.Path == a55test.ChargePath {
					charges++
				}
			}
			assert.Equal(t, 1, charges, "the replay sent nothing")
		})
	}
}

// A charge answered from the journal equals the one the first call
// returned (UUID, status, amounts, card summary, times), with the same key,
// key creation time (to the microsecond the journal keeps) and status.
func TestChargeFromTheJournalEqualsTheOriginal(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j, reopen := b.open(t)
			srv := a55test.New(t)
			first, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-eq"))
			require.NoError(t, err)
			srv.Clock().Advance(25 * time.Hour)
			again, err := a55Client(t, srv, reopen(t)).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-eq"))
			require.NoError(t, err)
			assert.True(t, again.Meta.FromJournal)
			assert.Equal(t, first.Meta.Key, again.Meta.Key)
			assert.True(t, first.Meta.Key.Created().Truncate(time.Microsecond).Equal(again.Meta.Key.Created()), "%v %v", first.Meta.Key.Created(), again.Meta.Key.Created())
			assert.Equal(t, first.Meta.StatusCode, again.Meta.StatusCode)
			assert.Equal(t, first.Meta.RequestID, again.Meta.RequestID)
			a, b := *first, *again
			a.Meta, b.Meta = a55.ResponseMeta{}, a55.ResponseMeta{}
			assert.Equal(t, exportedFields(a), exportedFields(b))
			// The answer, as Raw gives it: the journal keeps it redacted,
			// the same members and values in its own member order.
			assert.JSONEq(t, string(a.Raw()), string(b.Raw()))
		})
	}
}

// exportedFields is every exported field of v, a struct, by name.
func exportedFields(v any) map[string]any {
	rv := reflect.ValueOf(v)
	out := map[string]any{}
	for i := range rv.NumField() {
		if f := rv.Type().Field(i); f.IsExported() {
			out[f.Name] = rv.Field(i).Interface()
		}
	}
	return out
}
