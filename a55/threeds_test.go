package a55

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// 3DS_REQUIRED is an action, never a decline, in either shape, at any
// status (402 included) and in a 2xx charge in a failed status: its own
// kind, the charge and its challenge URL reachable from the error, final
// for the key (sent once, recorded failed, answered again from the
// journal with the charge).
func TestThreeDSRequiredIsAnActionNotADecline(t *testing.T) {
	for shape, tc := range map[string]struct {
		a      answer
		charge bool
		url    string
	}{
		"charge-level 400": {answer{400, `{"charge_uuid":"c-1","status":"pending","url_3ds":"https://acs.example/c-1","message":[{"code":"3DS_REQUIRED","source":"3ds","description":"3DS needed"}]}`}, true, "https://acs.example/c-1"},
		"charge-level 402": {answer{402, `{"charge_uuid":"c-1","status":"error","action_url":"https://acs.example/c-1?t=1","message":[{"code":"3DS_REQUIRED","description":"3DS needed"}]}`}, true, "https://acs.example/c-1?t=1"},
		"charge-level 409": {answer{409, `{"charge_uuid":"c-1","status":"error","message":[{"code":"3ds_required","description":"3DS needed"}]}`}, true, ""},
		"general 400":      {answer{400, `{"error":{"code":"3DS_REQUIRED","message":"3DS needed"},"url_3ds":"https://acs.example/x"}`}, false, "https://acs.example/x"},
		"general 422":      {answer{422, `{"error":{"code":"3DS_REQUIRED","message":"3DS needed","url_3ds":"https://acs.example/y"}}`}, false, "https://acs.example/y"},
		"2xx error":        {answer{200, `{"charge_uuid":"c-1","status":"error","url_3ds":"https://acs.example/c-1","message":[{"code":"3DS_REQUIRED"}]}`}, true, "https://acs.example/c-1"},
		"2xx Declined":     {answer{200, `{"charge_uuid":"c-1","status":"Declined","message":[{"code":"3DS_REQUIRED"}]}`}, true, ""},
		"hostile URL":      {answer{400, `{"charge_uuid":"c-1","status":"pending","url_3ds":"javascript:alert(1)","message":[{"code":"3DS_REQUIRED"}]}`}, true, ""},
	} {
		t.Run(shape, func(t *testing.T) {
			j := journal.NewMemory()
			r := newCodeRig(t, payonce.WithJournal(j))
			r.answer(tc.a)
			ctx := context.Background()
			_, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-47"))
			require.ErrorIs(t, err, ErrThreeDSRequired)
			assert.NotErrorIs(t, err, ErrCardDeclined)
			assert.NotErrorIs(t, err, ErrChargeFailed)
			assert.False(t, payonce.IsResumable(err))
			assert.Equal(t, r.keys[0], payonce.KeyOf(err).String())
			url, ok := ChallengeURL(err)
			assert.Equal(t, tc.url != "", ok)
			assert.Equal(t, tc.url, url)
			assert.NotContains(t, err.Error(), "acs.example", "the challenge URL is no error text")
			got, ok := ChargeFromError(err)
			assert.Equal(t, tc.charge, ok)
			if tc.charge {
				assert.Equal(t, "c-1", got.UUID)
			}
			e, gerr := j.Get(ctx, r.client.core.Scope(), "order-47")
			require.NoError(t, gerr)
			assert.Equal(t, payonce.JournalFailed, e.State, "final for the key")

			_, err = r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-47"))
			require.ErrorIs(t, err, ErrThreeDSRequired)
			var ae *payonce.APIError
			require.ErrorAs(t, err, &ae)
			assert.True(t, ae.FromJournal)
			if tc.charge {
				got, ok = ChargeFromError(err)
				require.True(t, ok)
				assert.Equal(t, "c-1", got.UUID)
			}
			creates, gets := r.counts()
			assert.Equal(t, 1, creates)
			assert.Zero(t, gets)
		})
	}
}

// A 2xx pending charge with a challenge is a success that needs an
// action, whatever message it carries.
func TestPendingChargeWithAChallengeIsASuccess(t *testing.T) {
	r := newCodeRig(t)
	r.answer(answer{200, `{"charge_uuid":"c-1","status":"pending","url_3ds":"https://acs.example/c-1","message":[{"code":"3DS_REQUIRED"}]}`})
	ch, err := r.client.Charges.Create(context.Background(), refCharge())
	require.NoError(t, err)
	assert.True(t, ch.Status.Is(StatusPending))
}
