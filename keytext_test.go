package payonce_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
)

func TestKeyTextRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 28, 10, 11, 12, 13000, time.UTC)
	k := keytest.Key(t, "order-2026-000123", created)
	b, err := k.MarshalText()
	require.NoError(t, err)
	text := string(b)
	require.True(t, strings.HasPrefix(text, "po1."))
	assert.NotContains(t, text, "order-2026", "opaque")
	got, err := payonce.ParseKey(text)
	require.NoError(t, err)
	assert.Equal(t, "order-2026-000123", got.String())
	assert.True(t, created.Equal(got.Created()))
	assert.Equal(t, k, got)
	zero, err := payonce.Key{}.MarshalText()
	require.NoError(t, err)
	assert.Empty(t, zero)
	assert.True(t, payonce.KeyOf(nil).IsZero())
	assert.Equal(t, k, payonce.KeyOf(&payonce.APIError{Key: k}))

	// As a JSON field, by its text form; an empty one is the zero Key.
	type job struct{ Key payonce.Key }
	js, err := json.Marshal(job{Key: k})
	require.NoError(t, err)
	var back job
	require.NoError(t, json.Unmarshal(js, &back))
	assert.Equal(t, k, back.Key)
	require.NoError(t, json.Unmarshal([]byte(`{"Key":""}`), &back))
	assert.True(t, back.Key.IsZero())
}

func TestParseKeyRefusesGarbage(t *testing.T) {
	for _, s := range []string{"", "po1.", "po2.eyJrIjoiYSJ9", "po1.!!!", "po1." + strings.Repeat("A", 2000),
		"po1.bnVsbA",                           // null
		"po1.eyJrIjoiIiwidCI6MX0",              // empty key
		"po1.eyJrIjoiYWJjZGVmZ2hpamtsbW5vcCJ9", // no time
		"po1.eyJrIjoiYWJjXG5kZWYiLCJ0IjoxfQ",   // control character in key
		"4111111111111111"} {
		_, err := payonce.ParseKey(s)
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, s)
		assert.NotContains(t, err.Error(), "4111111111111111")
		var k payonce.Key
		if s != "" {
			require.ErrorIs(t, k.UnmarshalText([]byte(s)), payonce.ErrInvalidRequest, s)
		}
	}
}

// A text that does not parse leaves the zero Key, which a call refuses
// before sending anything.
func TestUnparsedKeySendsNothing(t *testing.T) {
	s := newStub(t, okCharge)
	c := journalClient(t, s, nil, newClock())
	k, perr := payonce.ParseKey("po1.garbage")
	require.ErrorIs(t, perr, payonce.ErrInvalidRequest)
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithKey(k))
	require.ErrorIs(t, err, payonce.ErrKeyRequired)
	assert.Zero(t, s.calls.Load())
}

// A key stored by its text form in one process keeps its creation time in
// another: 23.5 hours later the guard refuses to send it.
func TestStoredKeyKeepsItsAgeAcrossProcesses(t *testing.T) {
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	clk := newClock()
	c := journalClient(t, s, nil, clk)
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil)
	require.Error(t, err)
	stored, merr := payonce.KeyOf(err).MarshalText()
	require.NoError(t, merr)
	require.NotEmpty(t, stored)
	sent := s.calls.Load()

	clk.Advance(23*time.Hour + 30*time.Minute)
	other := journalClient(t, s, nil, clk) // another process
	k, perr := payonce.ParseKey(string(stored))
	require.NoError(t, perr)
	_, err2 := other.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithKey(k))
	require.ErrorIs(t, err2, payonce.ErrKeyExpired)
	assert.Equal(t, sent, s.calls.Load(), "nothing sent")
	assert.Equal(t, payonce.KeyOf(err).String(), payonce.KeyOf(err2).String())

	// Within the window it resumes with the same key.
	clk2 := newClock()
	clk2.Advance(time.Hour)
	fresh := journalClient(t, s, nil, clk2)
	_, err3 := fresh.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithKey(k))
	require.Error(t, err3)
	keys := s.sentKeys()
	assert.Equal(t, payonce.KeyOf(err).String(), keys[len(keys)-1])

	// The key read from the error itself carries the creation time too.
	_, err4 := other.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithKey(payonce.KeyOf(err)))
	require.ErrorIs(t, err4, payonce.ErrKeyExpired)
}

// A job redelivered 25 hours later: its key carries the job's creation
// time, so the guard refuses it instead of opening a second card.
func TestTaskKeyRefusesARedeliveryPastTheWindow(t *testing.T) {
	s := newStub(t, okCharge)
	clk := newClock()
	jobCreated := clk.Now()
	clk.Advance(25 * time.Hour)
	c := journalClient(t, s, nil, clk)
	key, err := payonce.NewKey(jobCreated, "openapi:apply", "job-42-0000000000")
	require.NoError(t, err)
	_, err = c.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithKey(key))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Zero(t, s.calls.Load())
	assert.Equal(t, "openapi:apply:job-42-0000000000", payonce.KeyOf(err).String())

	fresh := journalClient(t, s, nil, newClock())
	meta, err := fresh.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithKey(key))
	require.NoError(t, err)
	assert.True(t, jobCreated.Equal(meta.Key.Created()))

	// A job without its creation time gets no key at all.
	_, err = payonce.NewKey(time.Time{}, "openapi:apply", "job-42-0000000000")
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
}

func FuzzParseKey(f *testing.F) {
	k := keytest.Key(f, "order-2026-000123", time.Unix(1764412800, 5))
	b, _ := k.MarshalText()
	f.Add(string(b))
	f.Add("po1.")
	f.Add("po1.eyJrIjoiIiwidCI6MX0")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := payonce.ParseKey(s)
		if err != nil {
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			return
		}
		text, err := k.MarshalText()
		require.NoError(t, err)
		again, err := payonce.ParseKey(string(text))
		require.NoError(t, err)
		assert.Equal(t, k.String(), again.String())
		assert.True(t, k.Created().Equal(again.Created()))
	})
}

// Hostile stored keys are typed errors before anything is sent, never a
// panic: a key the provider's rules refuse, a key with bytes a header
// cannot carry, a time far out of range.
func TestHostileStoredKeysSendNothing(t *testing.T) {
	tok := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return "po1." + base64.RawURLEncoding.EncodeToString(b)
	}
	s := newStub(t, okCharge)
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	for name, token := range map[string]string{
		"short key":       tok(map[string]any{"k": "abc", "t": 1}),
		"non-ascii key":   tok(map[string]any{"k": "ключ-идемпотентности-0001", "t": 1}),
		"space in key":    tok(map[string]any{"k": "key with spaces 0001", "t": 1}),
		"DEL in key":      tok(map[string]any{"k": "key-0001-0001-0001\u007f", "t": 1}),
		"negative time":   tok(map[string]any{"k": "key-0001-0001-0001", "t": -5}),
		"time overflow":   `po1.eyJrIjoia2V5LTAwMDEtMDAwMS0wMDAxIiwidCI6MWUzMDB9`,
		"array":           tok([]any{"k", 1}),
		"huge":            "po1." + strings.Repeat("QUFB", 300),
		"padded base64":   "po1.eyJrIjoia2V5LTAwMDEtMDAwMS0wMDAxIiwidCI6MX0=",
		"trailing object": "po1." + base64.RawURLEncoding.EncodeToString([]byte(`{"k":"key-0001-0001-0001","t":1}{"k":"x"}`)),
	} {
		for _, ref := range []bool{false, true} {
			k, _ := payonce.ParseKey(token) // a text that does not parse is the zero Key
			opts := []payonce.CallOption{payonce.WithKey(k)}
			if ref {
				opts = append(opts, payonce.WithReference("tok-"+name))
			}
			_, err := c.Do(t.Context(), chargeReq("10.00"), nil, opts...)
			require.Error(t, err, name)
			var apiErr *payonce.APIError
			require.ErrorAs(t, err, &apiErr, name)
			assert.True(t, errors.Is(err, payonce.ErrInvalidRequest) || errors.Is(err, payonce.ErrKeyTooShort) ||
				errors.Is(err, payonce.ErrKeyInvalidChars), "%s: %v", name, err)
		}
	}
	assert.Zero(t, s.calls.Load(), "nothing sent")
	pending, err := j.Pending(t.Context(), journal.PendingQuery{})
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing recorded")
}
