package payonce_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rowText is every stored column of an entry, as one string.
func rowText(t *testing.T, e payonce.JournalEntry) string {
	t.Helper()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return string(b) + string(e.Result)
}

// A hostile server names the CVV with a prefix or suffix ("card_cvv",
// "cardCvc", "cvv_code", "card_pin") and writes the card number as a JSON
// number in any notation: no row keeps them, in the result or in the
// error text.
func TestJournalRowHoldsNoPrefixedSecretOrNumberInOtherNotation(t *testing.T) {
	const success = `{"id":"ch_1","status":"confirmed","api_key":"ak_hostile_42","X-Api-Key":"ak_hostile_42","card_cvv":"987","cardCvc":"987","cvv_code":"987","card_pin":"987",` +
		`"e":4.111111111111111e15,"E":4111111111111111E0,"neg":-4111111111111111,"f":4111111111111111.0,"amount":100.5,"big":12345678901234567890123}`
	s := newStub(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(payonce.HeaderIdempotencyKey) == "hostile-400-key-0001" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"INVALID","message":"refused card_cvv=987, cardCvc: 987 and card_pin='987'"}}`)
			return
		}
		_, _ = io.WriteString(w, success)
	})
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	ctx := t.Context()
	var out map[string]any
	_, err := c.Do(ctx, chargeReq("10.00"), &out, payonce.WithReference("ok"), payonce.WithKey(keytest.Key(t, "hostile-ok-key-0001", newClock().Now())))
	require.NoError(t, err)
	_, err = c.Do(ctx, chargeReq("10.00"), nil, payonce.WithReference("bad"), payonce.WithKey(keytest.Key(t, "hostile-400-key-0001", newClock().Now())))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)

	for _, ref := range []string{"ok", "bad"} {
		e, err := j.Get(ctx, "a55:client-1", ref)
		require.NoError(t, err)
		row := rowText(t, e)
		assert.NotContains(t, row, "987", ref)
		assert.NotRegexp(t, `4\.?111111111111111`, row, ref)
		assert.NotContains(t, row, "ak_hostile_42", ref)
	}
	ok, err := j.Get(ctx, "a55:client-1", "ok")
	require.NoError(t, err)
	// What is not a card number passes through unchanged.
	assert.Contains(t, string(ok.Result), `"amount":100.5`)
	assert.Contains(t, string(ok.Result), `"big":12345678901234567890123`)
}

// The key-age guard of a pending entry, at its edge: window 24 h, margin
// 1 h. A key 23 h minus a microsecond old is resumed with the stored key;
// at 23 h it is ErrOutcomeUnknown and nothing is sent, however often the
// reference is called again.
func TestJournalGuardEdgeIsExact(t *testing.T) {
	for _, tc := range []struct {
		age    time.Duration
		resume bool
	}{{23*time.Hour - time.Microsecond, true}, {23 * time.Hour, false}, {48 * time.Hour, false}} {
		t.Run(tc.age.String(), func(t *testing.T) {
			j := journal.NewMemory()
			clk := newClock()
			fail := true
			s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if fail {
					w.WriteHeader(http.StatusBadGateway)
					return
				}
				okCharge(n, w, r)
			})
			c := journalClient(t, s, j, clk)
			_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("edge"))
			require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
			key, sent := payonce.KeyOf(err).ID(), s.calls.Load()
			fail = false
			clk.Advance(tc.age)
			for range 3 {
				var out chargeOut
				meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("edge"))
				if tc.resume {
					require.NoError(t, err)
					assert.Equal(t, key, meta.Key.ID())
					assert.Equal(t, key, s.sentKeys()[len(s.sentKeys())-1])
					continue
				}
				require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
				assert.Equal(t, key, payonce.KeyOf(err).ID())
				assert.Equal(t, sent, s.calls.Load(), "nothing sent")
			}
		})
	}
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
	c := journalClient(t, s, journal.NewMemory(), newClock())
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
	pending, err := c.Journal().(journal.Store).Pending(t.Context(), journal.PendingQuery{})
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing recorded")
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
	assert.Equal(t, "jobs:charge:job-0000000042", meta.Key.ID())
}

// A path carrying a secret or a card number (a raw Do with a query glued to
// its path, an ID that is a card number) does not put it in the row: the
// stored path is redacted like every other stored text.
func TestJournalRowPathHoldsNoSecret(t *testing.T) {
	s := newStub(t, okCharge)
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	for i, p := range []string{"/charge/?access_token=tok_in_path_1", "/cards/4111111111111111/charge", "/charge;cvv=987"} {
		req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: p, Body: map[string]string{"amount": "1.00"}, Keyed: true}
		// A fixed key: a random UUID may itself hold the digits "987".
		_, _ = c.Do(t.Context(), req, nil, payonce.WithReference(fmt.Sprintf("path-%d", i)), payonce.WithKey(keytest.Key(t, fmt.Sprintf("path-key-%04d-abcdef", i), newClock().Now())))
		e, err := j.Get(t.Context(), "a55:client-1", fmt.Sprintf("path-%d", i))
		require.NoError(t, err)
		row := rowText(t, e)
		assert.NotContains(t, row, "tok_in_path_1")
		assert.NotContains(t, row, "4111111111111111")
		assert.NotContains(t, row, "cvv=987") // bare "987" may stand in a timestamp
	}
}

// A request ID a hostile server fills with a card number or a secret does
// not reach the row.
func TestJournalRowRequestIDHoldsNoSecret(t *testing.T) {
	for i, rid := range []string{"4111111111111111", "req cvv=987", "access_token=tok_in_reqid_1"} {
		s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Request-Id", rid)
			_, _ = io.WriteString(w, `{"id":"ch_1","status":"confirmed"}`)
		})
		j := journal.NewMemory()
		c := journalClient(t, s, j, newClock())
		// A fixed key: a random UUID may itself hold the digits "987".
		_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference(fmt.Sprintf("rid-%d", i)), payonce.WithKey(keytest.Key(t, fmt.Sprintf("rid-key-%04d-abcdef", i), newClock().Now())))
		require.NoError(t, err)
		e, err := j.Get(t.Context(), "a55:client-1", fmt.Sprintf("rid-%d", i))
		require.NoError(t, err)
		row := rowText(t, e)
		assert.NotContains(t, row, "4111111111111111")
		assert.NotContains(t, row, "cvv=987") // bare "987" may stand in a timestamp's nanoseconds
		assert.NotContains(t, row, "tok_in_reqid_1")
	}
}

// An entry that failed temporarily and then succeeded keeps no error of
// the earlier run: a succeeded row names no error kind, code or message.
func TestJournalSucceededAfterAFailureKeepsNoStaleError(t *testing.T) {
	fail := true
	s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"code":"DOWN","message":"maintenance"}}`)
			return
		}
		okCharge(n, w, r)
	})
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("stale"))
	require.Error(t, err)
	fail = false
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("stale"))
	require.NoError(t, err)
	e, err := j.Get(t.Context(), "a55:client-1", "stale")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Empty(t, e.ErrorKind)
	assert.Empty(t, e.ErrorCode)
	assert.Empty(t, e.ErrorMessage)
}
