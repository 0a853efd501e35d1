package a55

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
)

// Every code the documented contract lists means what its action says,
// in any case: the kind, and what the core does next.
func TestCodeTableFollowsTheReference(t *testing.T) {
	retry := corekit.Advice{Retry: corekit.RetrySameKey}
	never := corekit.Advice{Retry: corekit.RetryNever}
	want := map[string]struct {
		kind   error
		advice corekit.Advice
	}{
		"decline":           {ErrCardDeclined, corekit.Advice{}},
		"challenge":         {ErrThreeDSRequired, corekit.Advice{}},
		"retry_after_60s":   {payonce.ErrServer, corekit.Advice{Retry: corekit.RetrySameKey, NotBefore: time.Minute}},
		"retry":             {nil, retry}, // the kind is the code's own (server, rate limited)
		"look_up_first":     {payonce.ErrOutcomeUnknown, never},
		"original_response": {payonce.ErrOutcomeUnknown, never},
		"invalid_request":   {payonce.ErrInvalidRequest, corekit.Advice{}},
		"invalid_state":     {ErrInvalidState, corekit.Advice{}},
	}
	for _, c := range readReference(t).Codes {
		w, ok := want[c.Action]
		require.True(t, ok, "action %q of %s", c.Action, c.Code)
		for _, spelled := range []string{c.Code, strings.ToLower(c.Code), " " + c.Code + " "} {
			if w.kind != nil {
				assert.Equal(t, w.kind, codeKind(spelled), spelled)
			} else {
				assert.NotNil(t, codeKind(spelled), spelled)
			}
			assert.Equal(t, w.advice, Codec{}.Advise(&payonce.APIError{Code: spelled}), spelled)
		}
	}
	assert.Equal(t, payonce.ErrRateLimited, codeKind("RATE_LIMIT_EXCEEDED"))
	assert.Equal(t, payonce.ErrServer, codeKind("PROCESSING_ERROR"))
	assert.Equal(t, payonce.ErrIdempotencyConflict, codeKind("IDEMPOTENCY_KEY_CONFLICT"))
	assert.Equal(t, payonce.ErrKeyTooShort, codeKind("IDEMPOTENCY_KEY_TOO_SHORT"))
	assert.Nil(t, codeKind("something_new"))
	assert.Equal(t, corekit.Advice{}, Codec{}.Advise(&payonce.APIError{Code: "something_new"}))
	assert.NotEqual(t, ErrCardDeclined, codeKind("3DS_REQUIRED"), "an action, not a decline")
}

// Declines and return codes, in either error shape and as a 2xx charge
// in a failed status: final, never retried, the charge kept when the
// answer names one. 70 and 99 are a decided charge (ErrChargeFailed).
func TestDeclinesAndReturnCodes(t *testing.T) {
	codes := map[string]error{
		"CARD_DECLINED": ErrCardDeclined, "INVALID_CARD": ErrCardDeclined, "EXPIRED_CARD": ErrCardDeclined,
		"INSUFFICIENT_FUNDS": ErrCardDeclined, "INVALID_CVC": ErrCardDeclined, "3DS_FAILED": ErrCardDeclined,
		"FRAUD_SUSPECTED": ErrCardDeclined, "fraud_suspected": ErrCardDeclined,
		"05": ErrCardDeclined, "57": ErrCardDeclined, "77": ErrCardDeclined, "78": ErrCardDeclined,
		"70": ErrChargeFailed, "99": ErrChargeFailed,
	}
	for code, kind := range codes {
		for shape, a := range map[string]answer{
			"charge-level 400": {400, `{"charge_uuid":"c-1","status":"error","message":[{"code":"` + code + `","source":"acquirer","description":"no"}]}`},
			"charge-level 402": {402, `{"charge_uuid":"c-1","status":"Error","message":[{"code":"` + code + `","source":"acquirer","description":"no"}]}`},
			"2xx error":        {200, `{"charge_uuid":"c-1","status":"error","message":[{"code":"` + code + `","description":"no"}]}`},
			"2xx DECLINED":     {201, `{"charge_uuid":"c-1","status":"DECLINED","message":[{"code":"` + code + `","description":"no"}]}`},
		} {
			r := newCodeRig(t)
			r.answer(a)
			_, err := r.client.Charges.Create(context.Background(), refCharge())
			require.ErrorIs(t, err, kind, "%s %s", code, shape)
			for _, other := range []error{ErrCardDeclined, ErrChargeFailed, ErrThreeDSRequired, payonce.ErrOutcomeUnknown} {
				if other != kind {
					assert.NotErrorIs(t, err, other, "%s %s", code, shape)
				}
			}
			got, ok := ChargeFromError(err)
			require.True(t, ok, "%s %s", code, shape)
			assert.Equal(t, "c-1", got.UUID)
			assert.False(t, payonce.IsResumable(err))
			creates, gets := r.counts()
			assert.Equal(t, 1, creates, "%s %s: final", code, shape)
			assert.Zero(t, gets)
		}
		if code[0] >= '0' && code[0] <= '9' {
			continue // return codes come in the charge-level shape
		}
		// The general shape names no charge: the kind alone.
		r := newCodeRig(t)
		r.answer(answer{400, `{"error":{"code":"` + code + `","message":"no"}}`})
		_, err := r.client.Charges.Create(context.Background(), refCharge())
		require.ErrorIs(t, err, kind, code)
	}
}

// The codes of refused input and illegal moves, and a 409 by its shape.
func TestRefusalCodesAndConflicts(t *testing.T) {
	for _, tc := range []struct {
		a    answer
		kind error
	}{
		{answer{422, `{"error":{"code":"CURRENCY_NOT_SUPPORTED","message":"no"}}`}, payonce.ErrInvalidRequest},
		{answer{422, `{"error":{"code":"AMOUNT_INVALID","message":"no","details":[{"field":"installment_value","reason":"decimals"}]}}`}, payonce.ErrInvalidRequest},
		{answer{400, `{"charge_uuid":"c-1","status":"error","message":[{"code":"AMOUNT_INVALID","description":"no"}]}`}, payonce.ErrInvalidRequest},
		{answer{400, `{"charge_uuid":"c-1","status":"confirmed","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"no"}]}`}, ErrInvalidState},
		{answer{409, `{"charge_uuid":"c-1","status":"confirmed","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"no"}]}`}, ErrInvalidState},
		{answer{409, `{"error":{"code":"CANCEL_NOT_ALLOWED","message":"no"}}`}, ErrInvalidState},
		{answer{409, `{"charge_uuid":"c-1","status":"paid","message":[{"code":"SOMETHING_NEW","description":"no"}]}`}, ErrInvalidState},
		{answer{409, `{"error":{"code":"IDEMPOTENCY_KEY_CONFLICT","message":"reused"}}`}, payonce.ErrIdempotencyConflict},
		{answer{409, `{"error":{"code":"SOMETHING_NEW","message":"reused"}}`}, payonce.ErrIdempotencyConflict},
		{answer{409, ``}, payonce.ErrIdempotencyConflict},
	} {
		r := newCodeRig(t)
		r.answer(tc.a)
		_, err := r.client.Charges.Create(context.Background(), refCharge())
		require.ErrorIs(t, err, tc.kind, tc.a.body)
		assert.False(t, payonce.IsResumable(err), tc.a.body)
		creates, _ := r.counts()
		assert.Equal(t, 1, creates, tc.a.body)
	}
}

// fakeSleep is the client's wait on a fake clock (corekit.WithSleep):
// each wait moves the clock on and is recorded; nothing sleeps.
type fakeSleep struct {
	clk   *payoncetest.Clock
	mu    sync.Mutex
	waits []time.Duration
}

func newFakeSleep() *fakeSleep { return &fakeSleep{clk: payoncetest.NewFixedClock(guideTime)} }

func (f *fakeSleep) options(p payonce.RetryPolicy) []payonce.Option {
	return []payonce.Option{payoncetest.ClientClock(f.clk.Now), payonce.WithSleep(f.sleep), payonce.WithRetryPolicy(p)}
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	f.clk.Advance(d)
	return ctx.Err()
}

func (f *fakeSleep) all() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// waitingPolicy may wait the 60 s 3DS_UNAVAILABLE asks for.
func waitingPolicy() payonce.RetryPolicy {
	p := fastPolicy()
	p.MaxRetryAfter, p.MaxElapsedTime = 2*time.Minute, 10*time.Minute
	return p
}

// 3DS_UNAVAILABLE, whatever its shape or status, is retried under the
// same key with the same body bytes, no sooner than 60 s later on the
// client's clock (a fake one: nothing sleeps).
func TestThreeDSUnavailableWaitsAMinuteUnderTheSameKey(t *testing.T) {
	for shape, a := range map[string]answer{
		"charge-level 400": {400, `{"charge_uuid":"c-1","status":"error","message":[{"code":"3DS_UNAVAILABLE","source":"3ds","description":"3DS service temporarily down"}]}`},
		"general 503":      {503, `{"error":{"code":"3DS_UNAVAILABLE","message":"3DS service temporarily down"}}`},
		"general 422":      {422, `{"error":{"code":"3ds_unavailable","message":"3DS service temporarily down"}}`},
	} {
		t.Run(shape, func(t *testing.T) {
			f := newFakeSleep()
			r := newCodeRig(t, f.options(waitingPolicy())...)
			r.answer(a, answer{200, `{"charge_uuid":"c-2","status":"confirmed","amount":"100.00"}`})
			start := f.clk.Now()
			ch, err := r.client.Charges.Create(context.Background(), refCharge())
			require.NoError(t, err)
			assert.Equal(t, "c-2", ch.UUID)
			assert.Equal(t, 2, ch.Meta.Attempts)
			waits := f.all()
			require.Len(t, waits, 1)
			assert.GreaterOrEqual(t, waits[0], time.Minute, "no sooner than 60 s")
			assert.GreaterOrEqual(t, f.clk.Now().Sub(start), time.Minute)
			require.Len(t, r.keys, 2)
			assert.Equal(t, r.keys[0], r.keys[1], "the same key")
			assert.Equal(t, r.bodies[0], r.bodies[1], "the same body bytes")
		})
	}
}

// A policy (the default's MaxRetryAfter is 30 s) or a context that cannot
// wait 60 s ends the call at once, resumable with its key, never final:
// through a journal the entry stays pending, and the next run with the
// reference sends the same key and body bytes.
func TestThreeDSUnavailableTheCallCannotWaitIsResumable(t *testing.T) {
	f := newFakeSleep()
	p := fastPolicy()
	p.MaxRetryAfter = 30 * time.Second
	j := journal.NewMemory()
	r := newCodeRig(t, append(f.options(p), payonce.WithJournal(j))...)
	r.answer(answer{503, `{"error":{"code":"3DS_UNAVAILABLE","message":"3DS service temporarily down"}}`},
		answer{200, `{"charge_uuid":"c-2","status":"confirmed","amount":"100.00"}`})
	ctx := context.Background()
	_, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-46"))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.True(t, payonce.IsResumable(err))
	assert.NotErrorIs(t, err, ErrCardDeclined)
	assert.Contains(t, err.Error(), "1m0s")
	assert.Empty(t, f.all(), "nothing waited")
	e, gerr := j.Get(ctx, r.client.core.Scope(), "order-46")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State)
	assert.False(t, e.LookUpFirst())

	ch, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-46"))
	require.NoError(t, err)
	assert.Equal(t, "c-2", ch.UUID)
	require.Len(t, r.keys, 2)
	assert.Equal(t, r.keys[0], r.keys[1])
	assert.Equal(t, r.bodies[0], r.bodies[1])

	// A context whose deadline comes before the minute is over.
	r2 := newCodeRig(t, newFakeSleep().options(waitingPolicy())...)
	r2.answer(answer{400, `{"charge_uuid":"c-1","status":"error","message":[{"code":"3DS_UNAVAILABLE"}]}`})
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = r2.client.Charges.Create(dctx, refCharge())
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.True(t, payonce.IsResumable(err))
	assert.Contains(t, err.Error(), "deadline")
	creates, _ := r2.counts()
	assert.Equal(t, 1, creates)
}

// PROCESSING_ERROR is retried with the policy's backoff under the same
// key and body, whatever its status; when the attempts run out, the call
// is resumable with its key.
func TestProcessingErrorIsRetriedUnderTheSameKey(t *testing.T) {
	for _, a := range []answer{
		{400, `{"charge_uuid":"c-1","status":"error","message":[{"code":"PROCESSING_ERROR","source":"acquirer","description":"internal failure"}]}`},
		{422, `{"error":{"code":"PROCESSING_ERROR","message":"internal failure"}}`},
		{500, `{"error":{"code":"PROCESSING_ERROR","message":"internal failure"}}`},
	} {
		f := newFakeSleep()
		r := newCodeRig(t, f.options(fastPolicy())...)
		r.answer(a, a, answer{200, `{"charge_uuid":"c-2","status":"confirmed","amount":"100.00"}`})
		ch, err := r.client.Charges.Create(context.Background(), refCharge())
		require.NoError(t, err, a.body)
		assert.Equal(t, 3, ch.Meta.Attempts)
		require.Len(t, r.keys, 3)
		for i := range r.keys {
			assert.Equal(t, r.keys[0], r.keys[i])
			assert.Equal(t, r.bodies[0], r.bodies[i])
		}
		w := f.all()
		require.Len(t, w, 2)
		assert.LessOrEqual(t, w[0], fastPolicy().MaxInterval, "the backoff's wait")

		r = newCodeRig(t, newFakeSleep().options(fastPolicy())...)
		r.answer(a)
		_, err = r.client.Charges.Create(context.Background(), refCharge())
		require.ErrorIs(t, err, payonce.ErrRetriesExhausted, a.body)
		assert.True(t, payonce.IsResumable(err))
		assert.NotErrorIs(t, err, ErrChargeFailed)
		creates, _ := r.counts()
		assert.Equal(t, fastPolicy().MaxAttempts, creates)
	}
}

// A 2xx charge in status error with a code that asks for a retry is a
// charge A55 stored under the key: a retry would be answered the same,
// so it is a decided failure (ErrChargeFailed), not retried.
func TestRetryCodeInAStoredChargeIsAFailure(t *testing.T) {
	for _, code := range []string{"PROCESSING_ERROR", "3DS_UNAVAILABLE"} {
		r := newCodeRig(t)
		r.answer(answer{200, `{"charge_uuid":"c-1","status":"error","message":[{"code":"` + code + `"}]}`})
		_, err := r.client.Charges.Create(context.Background(), refCharge())
		require.ErrorIs(t, err, ErrChargeFailed, code)
		assert.False(t, payonce.IsResumable(err))
		creates, _ := r.counts()
		assert.Equal(t, 1, creates)
	}
}
