package payonce_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// Two options naming different keys in one call are refused before
// sending (which one should win is the caller's bug, not a rule to
// guess); the same key twice is fine.
func TestConflictingKeySourcesAreRefused(t *testing.T) {
	created := newClock().Now().Add(-time.Hour) // the clients' clock: a key from the future is refused
	keyA := keytest.Key(t, "order-2026-000123-a", created)
	keyB := keytest.Key(t, "order-2026-000123-b", created)
	keyAOlder := keytest.Key(t, "order-2026-000123-a", created.Add(-time.Minute))
	refused := map[string][]payonce.CallOption{
		"two keys":                 {payonce.WithKey(keyA), payonce.WithKey(keyB)},
		"one key, two ages":        {payonce.WithKey(keyA), payonce.WithKey(keyAOlder)},
		"key then no key":          {payonce.WithKey(keyA), payonce.WithoutKey()},
		"no key then key":          {payonce.WithoutKey(), payonce.WithKey(keyA)},
		"two keys and a third one": {payonce.WithKey(keyA), payonce.WithKey(keyB), payonce.WithKey(keyA)},
	}
	for name, opts := range refused {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, nil, newClock())
			_, err := c.Do(t.Context(), chargeReq("1.00"), nil, opts...)
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			var ve *payonce.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Regexp(t, "different keys|contradict", err.Error())
			assert.Zero(t, s.calls.Load(), "nothing sent")
		})
	}
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, newClock())
	meta, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(keyA), payonce.WithKey(keyA))
	require.NoError(t, err, "the same key twice")
	assert.Equal(t, keyA, meta.Key)
}

// A client given no key rules still never sends a key older than 24 hours
// less the retry policy's safety margin (a server may have forgotten it
// and would run the operation again) nor one longer than 255 bytes: both
// are refused before any byte is sent.
func TestClientWithoutKeyRulesKeepsTheDefaultWindowAndLength(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payoncetest.ClientClock(func() time.Time { return now }))
	require.NoError(t, err)
	assert.Equal(t, payonce.DefaultKeyRules(), c.Settings().KeyRules)
	req := func() *payonce.Request {
		return &payonce.Request{Operation: "x", Method: http.MethodPost, Path: "/x", Body: map[string]string{"a": "b"}, Keyed: true}
	}

	_, err = c.Do(t.Context(), req(), nil, payonce.WithKey(keytest.Key(t, "order-1-payment", now.Add(-payonce.DefaultKeyWindow-time.Second))))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, "order-1-payment", payonce.KeyOf(err).String())

	// A key longer than 255 bytes cannot even be read back from storage:
	// what is left is the zero Key, refused.
	long, perr := payonce.ParseKey(keytest.Text(t, strings.Repeat("k", 256), now))
	require.ErrorIs(t, perr, payonce.ErrInvalidRequest)
	_, err = c.Do(t.Context(), req(), nil, payonce.WithKey(long))
	require.ErrorIs(t, err, payonce.ErrKeyRequired)
	assert.Zero(t, hits.Load(), "nothing was sent")

	// Within the window and the length, the call goes out.
	_, err = c.Do(t.Context(), req(), nil, payonce.WithKey(keytest.Key(t, strings.Repeat("k", 255), now.Add(-22*time.Hour))))
	require.NoError(t, err)
	assert.EqualValues(t, 1, hits.Load())
}

// The documented checkout (NewKey from the order and its creation time,
// the same key on every run) run again 25 h later: the key carries its
// age, so the client refuses it, nothing sent, instead of a second charge
// under one key.
func TestOrderKeyCannotPassTheWindow(t *testing.T) {
	clk := newClock()
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, clk)
	orderCreated := clk.Now()
	key, err := payonce.NewKey(orderCreated, "order", "1", "payment")
	require.NoError(t, err)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(key))
	require.NoError(t, err)

	clk.Advance(25 * time.Hour)
	again, err := payonce.NewKey(orderCreated, "order", "1", "payment") // the job rebuilds it
	require.NoError(t, err)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(again))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key.String(), payonce.KeyOf(err).String())
	assert.Equal(t, int32(1), s.calls.Load(), "nothing sent the second time")

	// Within the window the key goes out again (the server replays), with
	// the order's creation time as its age.
	k3, err := payonce.NewKey(clk.Now(), "order", "3", "payment")
	require.NoError(t, err)
	first, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(k3))
	require.NoError(t, err)
	clk.Advance(time.Hour)
	second, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(k3))
	require.NoError(t, err)
	assert.True(t, second.Key.Created().Equal(first.Key.Created()))
	assert.Equal(t, first.Key, second.Key)
}

// A task key with a zero job time (a queue message whose creation time was
// never filled in) would make every redelivery look brand new, so a
// redelivery after the provider forgot the key would run the job again: no
// key is built, and the zero Key is refused before anything is sent.
func TestTaskKeyZeroJobTimeIsRefused(t *testing.T) {
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, newClock())
	key, err := payonce.NewKey(time.Time{}, "jobs:charge", "job-0000000042")
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	var ve *payonce.ValidationError
	require.ErrorAs(t, err, &ve)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(key))
	require.ErrorIs(t, err, payonce.ErrKeyRequired)
	assert.Zero(t, s.calls.Load(), "nothing sent")

	// A real job time works as before.
	key, err = payonce.NewKey(newClock().Now().Add(-time.Hour), "jobs:charge", "job-0000000042")
	require.NoError(t, err)
	meta, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithKey(key))
	require.NoError(t, err)
	assert.Equal(t, "jobs:charge:job-0000000042", meta.Key.String())
}
