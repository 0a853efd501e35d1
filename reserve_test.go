package payonce_test

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

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
			key, sent := payonce.KeyOf(err).String(), s.calls.Load()
			fail = false
			clk.Advance(tc.age)
			for range 3 {
				var out chargeOut
				meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("edge"))
				if tc.resume {
					require.NoError(t, err)
					assert.Equal(t, key, meta.Key.String())
					assert.Equal(t, key, s.sentKeys()[len(s.sentKeys())-1])
					continue
				}
				require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
				assert.Equal(t, key, payonce.KeyOf(err).String())
				assert.Equal(t, sent, s.calls.Load(), "nothing sent")
			}
		})
	}
}

// lookUpCodec is providerCodec with one code whose answer leaves the
// outcome unknown (as A55's TIMEOUT does): never retried, never final.
type lookUpCodec struct{ providerCodec }

func (c lookUpCodec) DecodeError(status int, h http.Header, body []byte, e *payonce.APIError) {
	c.providerCodec.DecodeError(status, h, body, e)
	if e.Code == "UPSTREAM_SILENT" {
		e.Kind = payonce.ErrOutcomeUnknown
	}
}

func (lookUpCodec) Advise(e *payonce.APIError) corekit.Advice {
	if e.Code == "UPSTREAM_SILENT" {
		return corekit.Advice{Retry: corekit.RetryNever}
	}
	return corekit.Advice{}
}

// An answer that leaves the outcome unknown keeps the entry pending and
// marked to be looked up first, with the answer (redacted) for the
// lookup. Every later run with the reference sends nothing, whatever the
// key's age, and says to settle it; once settled, the settled outcome is
// the answer.
func TestJournalLookUpFirstEntryIsNeverSentAgain(t *testing.T) {
	j := journal.NewMemory()
	clk := newClock()
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusGatewayTimeout)
		_, _ = io.WriteString(w, `{"charge_uuid":"ch-9","status":"pending","message":[{"code":"UPSTREAM_SILENT","description":"no answer, card 4111111111111111"}]}`)
	})
	c := journalClient(t, s, j, clk, payonce.WithTestCodec(lookUpCodec{}))
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-7"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	require.EqualValues(t, 1, s.calls.Load(), "a 504 that leaves the outcome unknown is not retried")
	key := payonce.KeyOf(err).String()
	e, err := j.Get(t.Context(), c.Scope(), "order-7")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State)
	assert.True(t, e.LookUpFirst())
	assert.Equal(t, "UPSTREAM_SILENT", e.ErrorCode)
	assert.Contains(t, string(e.Result), `"charge_uuid":"ch-9"`)
	assert.NotContains(t, string(e.Result), "4111111111111111")

	for _, age := range []time.Duration{0, time.Hour, 30 * time.Hour} {
		clk.Advance(age)
		_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-7"))
		require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
		assert.EqualValues(t, 1, s.calls.Load(), "nothing sent again")
		assert.Equal(t, key, payonce.KeyOf(err).String())
		assert.False(t, payonce.IsResumable(err))
		got, ok := payonce.JournalEntryOf(err)
		require.True(t, ok)
		assert.True(t, got.LookUpFirst())
		assert.Contains(t, err.Error(), "look")
		assert.Contains(t, err.Error(), "settle")
	}

	_, err = c.Settle(t.Context(), "order-7", payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"id":"ch-9","status":"confirmed"}`), Reason: "looked up: ch-9 confirmed"})
	require.NoError(t, err)
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("order-7"))
	require.NoError(t, err)
	assert.True(t, meta.FromJournal)
	assert.Equal(t, "ch-9", out.ID)
	assert.EqualValues(t, 1, s.calls.Load())
}

// Without the mark, a pending entry whose last failure may still pass (a
// 502) is resumed with its key: LookUpFirst is only an answer's word.
func TestJournalOnlyAnUnknownOutcomeIsLookedUpFirst(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	c := journalClient(t, s, j, newClock(), payonce.WithTestCodec(lookUpCodec{}))
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-8"))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	e, err := j.Get(t.Context(), c.Scope(), "order-8")
	require.NoError(t, err)
	assert.False(t, e.LookUpFirst())
	assert.Empty(t, e.Result)
	sent := s.calls.Load()
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-8"))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	assert.Greater(t, s.calls.Load(), sent, "resumed")
}

// An entry recorded with an earlier form of the request (an earlier wire
// form, Request.EarlierForms) keeps its meaning: settled, it answers from
// the journal; in doubt, it is refused as in doubt with nothing sent,
// since its key is never sent again with another body. A request no form matches is a
// plain conflict, and a call without earlier forms one too.
func TestJournalEntryOfAnEarlierFormIsNeverSentWithAnotherBody(t *testing.T) {
	j := journal.NewMemory()
	clk := newClock()
	s := newStub(t, okCharge)
	c := journalClient(t, s, j, clk)
	ctx := t.Context()
	oldBody := []byte(`{"amount":"10.00","old":true}`)
	reserve := func(ref, path string, body []byte) payonce.JournalEntry {
		e := payonce.JournalEntry{Scope: c.Scope(), Reference: ref, Operation: "charges.create", Method: http.MethodPost, Path: path,
			Key: "earlier-key-" + ref, KeyCreated: clk.Now(), Fingerprint: c.Fingerprint(http.MethodPost, path, body),
			State: payonce.JournalPending, Sent: true, Attempts: 1, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
		_, created, err := j.Reserve(ctx, e)
		require.NoError(t, err)
		require.True(t, created)
		return e
	}
	earlier := func(forms ...payonce.EarlierForm) *payonce.Request {
		r := chargeReq("10.00")
		r.EarlierForms = func() []payonce.EarlierForm { return forms }
		return r
	}
	old := payonce.EarlierForm{Path: "/charge/", Body: oldBody}
	other := payonce.EarlierForm{Path: "/charge/", Body: []byte(`{"amount":"99.00","old":true}`)}

	e := reserve("in-doubt", "/charge/", oldBody)
	_, err := c.Do(ctx, earlier(other, old), nil, payonce.WithReference("in-doubt"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown, "in doubt: settled by lookup, never sent again")
	var efe *payonce.EarlierFormError
	require.ErrorAs(t, err, &efe)
	assert.Equal(t, "in-doubt", efe.Entry.Reference)
	assert.Equal(t, e.Key, payonce.KeyOf(err).String())
	assert.Contains(t, err.Error(), "earlier wire form")
	assert.False(t, payonce.IsResumable(err))
	fromErr, ok := payonce.JournalEntryOf(err)
	assert.True(t, ok)
	assert.Equal(t, e.Key, fromErr.Key)
	got, err := j.Get(ctx, c.Scope(), "in-doubt")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, got.State, "left as it was")

	_, err = c.Do(ctx, earlier(other), nil, payonce.WithReference("in-doubt"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.False(t, errors.As(err, &efe), "no form matches: a plain conflict")
	_, err = c.Do(ctx, chargeReq("10.00"), nil, payonce.WithReference("in-doubt"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.False(t, errors.As(err, &efe))

	reserve("settled", "/charge/", oldBody)
	_, err = c.Settle(ctx, "settled", payonce.Settlement{State: payonce.JournalSucceeded, Result: []byte(`{"id":"ch-old","status":"confirmed"}`), Reason: "earlier"})
	require.NoError(t, err)
	var out chargeOut
	meta, err := c.Do(ctx, earlier(old), &out, payonce.WithReference("settled"))
	require.NoError(t, err)
	assert.True(t, meta.FromJournal)
	assert.Equal(t, "ch-old", out.ID)

	reserve("old-path", "/charge/refund/", oldBody)
	_, err = c.Do(ctx, earlier(payonce.EarlierForm{Path: "/charge/refund/", Body: oldBody}), nil, payonce.WithReference("old-path"))
	require.ErrorAs(t, err, &efe, "an earlier path is an earlier form too")
	assert.Zero(t, s.calls.Load(), "nothing sent")
}
