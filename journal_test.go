package payonce_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/payoncetest"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stub is a tiny provider: answer decides each response; it records every
// request's key and body.
type stub struct {
	srv    *httptest.Server
	mu     sync.Mutex
	keys   []string
	bodies []string
	calls  atomic.Int32
	answer func(n int, w http.ResponseWriter, r *http.Request)
	seen   func(r *http.Request) // called before answering
}

func newStub(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *stub {
	s := &stub{answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.keys = append(s.keys, r.Header.Get(corekit.HeaderIdempotencyKey))
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		if s.seen != nil {
			s.seen(r)
		}
		s.answer(int(s.calls.Add(1)), w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *stub) sentKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

func okCharge(_ int, w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Request-Id", "req-1")
	_, _ = io.WriteString(w, `{"id":"ch_1","status":"confirmed","card":{"number":"4111111111111111","cvv":"123"},"access_token":"tok-secret"}`)
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)} }
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// providerCodec reads error answers as A55's codec does, then names the
// kind of a code A55 does not know as Coinepay's codec does, so that a
// core client pointed at a stub names the kinds either provider's codes
// mean.
type providerCodec struct{}

func (providerCodec) DecodeSuccess(_ int, _ http.Header, body []byte, out any) error {
	if out == nil || len(body) == 0 {
		return nil
	}
	return json.Unmarshal(body, out)
}

func (providerCodec) DecodeError(status int, h http.Header, body []byte, e *payonce.APIError) {
	a55.Codec{}.DecodeError(status, h, body, e)
	if e.Kind == nil && e.Code != "" {
		env, _ := json.Marshal(map[string]string{"message_key": e.Code})
		var cp payonce.APIError
		coinepay.Codec{}.DecodeError(status, h, env, &cp)
		e.Kind = cp.Kind
	}
}

// bothProviders is the provider of the journaled clients: A55's name and
// key rules, providerCodec, both providers' kinds, and as final for a key
// the core's defaults and the charges A55 decided.
func bothProviders() payonce.Provider {
	return payonce.Provider{
		Name:     "a55",
		KeyRules: payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: payonce.DefaultKeyWindow},
		Codec:    providerCodec{},
		Kinds: []error{a55.ErrCardDeclined, a55.ErrChargeFailed, a55.ErrThreeDSRequired, a55.ErrInvalidState,
			coinepay.ErrInsufficientBalance, coinepay.ErrSignatureInvalid, coinepay.ErrTimestampExpired, coinepay.ErrNonceReplayed},
		FinalKinds: append(payonce.DefaultFinalKinds(), a55.ErrInvalidState, a55.ErrCardDeclined, a55.ErrChargeFailed),
	}
}

// answeringClient is a journaled client on a memory journal whose server
// answers every request with status and body.
func answeringClient(t *testing.T, status int, body string) (*journal.Memory, *stub, *payonce.Client) {
	t.Helper()
	j := journal.NewMemory()
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
	return j, s, journalClient(t, s, j, newClock())
}

func journalClient(t *testing.T, s *stub, j payonce.Journal, clk *clock, extra ...payonce.Option) *payonce.Client {
	t.Helper()
	opts := []payonce.Option{
		payonce.WithBaseURL(s.srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
		payonce.WithProvider(bothProviders()),
		payonce.WithScope("a55:client-1"), payoncetest.ClientClock(clk.Now),
	}
	if j != nil {
		opts = append(opts, payonce.WithJournal(j))
	}
	c, err := payonce.NewClient(append(opts, extra...)...)
	require.NoError(t, err)
	return c
}

type chargeOut struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

func chargeReq(amount string) *payonce.Request {
	return &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge/",
		Body: map[string]string{"amount": amount}, Keyed: true}
}

func TestJournalReservesBeforeTheFirstByte(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	var atFirstByte payonce.JournalEntry
	var getErr error
	s.seen = func(r *http.Request) {
		if s.calls.Load() == 0 {
			atFirstByte, getErr = j.Get(context.Background(), "a55:client-1", "order-42/charge")
		}
	}
	c := journalClient(t, s, j, newClock())
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("order-42/charge"))
	require.NoError(t, err)
	require.NoError(t, getErr)
	assert.Equal(t, payonce.JournalPending, atFirstByte.State)
	assert.Equal(t, s.sentKeys()[0], atFirstByte.Key)
	assert.Equal(t, "a55:client-1", atFirstByte.Scope)
	assert.Equal(t, corekit.Fingerprint("POST", "/charge/", []byte(`{"amount":"10.00"}`)), atFirstByte.Fingerprint)
	assert.Equal(t, "order-42/charge", meta.Reference)
	assert.False(t, meta.FromJournal)
	assert.Equal(t, "ch_1", out.ID)
}

func TestJournalSucceededAnswersFromTheJournal(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	clk := newClock()
	c := journalClient(t, s, j, clk)
	var first chargeOut
	m1, err := c.Do(t.Context(), chargeReq("10.00"), &first, payonce.WithReference("order-1"))
	require.NoError(t, err)

	e, err := j.Get(t.Context(), "a55:client-1", "order-1")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Equal(t, 200, e.StatusCode)
	assert.Equal(t, "req-1", e.RequestID)
	assert.Equal(t, 1, e.Attempts)
	stored := string(e.Result)
	assert.NotContains(t, stored, "4111111111111111")
	assert.NotContains(t, stored, `"123"`)
	assert.NotContains(t, stored, "tok-secret")
	assert.Contains(t, stored, "1111")

	// 25 hours later, in "another process" (a new client on the same journal):
	// the server forgot the key; the journal answers, nothing is sent.
	clk.Advance(25 * time.Hour)
	c2 := journalClient(t, s, j, clk)
	var again chargeOut
	m2, err := c2.Do(t.Context(), chargeReq("10.00"), &again, payonce.WithReference("order-1"))
	require.NoError(t, err)
	assert.Equal(t, int32(1), s.calls.Load(), "nothing sent")
	assert.True(t, m2.FromJournal)
	assert.Equal(t, m1.Key, m2.Key)
	assert.True(t, m1.Key.Created().Equal(m2.Key.Created()))
	assert.Equal(t, 0, m2.Attempts)
	assert.Equal(t, "req-1", m2.RequestID)
	assert.Equal(t, first, again)
}

// A failure final for the key is recorded under its stable kind name and
// read back, with nothing sent, as the same typed error: a declined card,
// and a key the server's rules refused ("key_too_short", as earlier
// releases wrote it), which reads back as payonce.ErrKeyInvalid.
func TestJournalFailedReturnsTheSameTypedError(t *testing.T) {
	for _, tc := range []struct {
		status         int
		body, ref      string
		kind           error
		kindName, code string
	}{
		{http.StatusPaymentRequired, `{"error":{"code":"CARD_DECLINED","message":"declined card 4111111111111111 cvv=123"}}`,
			"order-2", a55.ErrCardDeclined, "card_declined", "CARD_DECLINED"},
		{http.StatusBadRequest, `{"error":{"code":"IDEMPOTENCY_KEY_TOO_SHORT","message":"too short"}}`,
			"order-k", payonce.ErrKeyInvalid, "key_too_short", "IDEMPOTENCY_KEY_TOO_SHORT"},
	} {
		t.Run(tc.kindName, func(t *testing.T) {
			j, s, c := answeringClient(t, tc.status, tc.body)
			_, err1 := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference(tc.ref))
			require.ErrorIs(t, err1, tc.kind)

			e, err := j.Get(t.Context(), "a55:client-1", tc.ref)
			require.NoError(t, err)
			assert.Equal(t, payonce.JournalFailed, e.State)
			assert.Equal(t, tc.kindName, e.ErrorKind)
			assert.Equal(t, tc.code, e.ErrorCode)
			assert.NotContains(t, e.ErrorMessage, "4111111111111111")
			assert.NotContains(t, e.ErrorMessage, "123")

			meta, err2 := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference(tc.ref))
			require.ErrorIs(t, err2, tc.kind)
			assert.Equal(t, int32(1), s.calls.Load(), "nothing sent")
			var a1, a2 *payonce.APIError
			require.ErrorAs(t, err1, &a1)
			require.ErrorAs(t, err2, &a2)
			assert.Equal(t, a1.Kind, a2.Kind)
			assert.Equal(t, a1.Code, a2.Code)
			assert.Equal(t, a1.StatusCode, a2.StatusCode)
			assert.Equal(t, a1.Key, a2.Key)
			assert.False(t, a1.FromJournal, "the first answer came from the server")
			assert.True(t, a2.FromJournal, "the second from the journal")
			assert.True(t, a1.Key.Created().Equal(a2.Key.Created()))
			var fromJournal *payonce.APIError
			assert.True(t, errors.As(err2, &fromJournal) && fromJournal.FromJournal, "answered from the journal")
			assert.False(t, payonce.IsTemporary(err2))
			assert.False(t, payonce.IsResumable(err2))
			assert.Equal(t, tc.ref, meta.Reference)
		})
	}
}

func TestJournalTemporaryFailureStaysPendingAndResumesWithTheKey(t *testing.T) {
	for name, fail := range map[string]func(w http.ResponseWriter){
		"5xx": func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
		"insufficient balance": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusPaymentRequired)
			_, _ = io.WriteString(w, `{"code":"insufficient_balance"}`)
		},
		"rate limited": func(w http.ResponseWriter) { w.WriteHeader(http.StatusTooManyRequests) },
	} {
		t.Run(name, func(t *testing.T) {
			j := journal.NewMemory()
			var healthy atomic.Bool
			s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if healthy.Load() {
					okCharge(n, w, r)
					return
				}
				fail(w)
			})
			policy := payoncetest.FastRetryPolicy()
			policy.MaxAttempts, policy.MaxRetryAfter = 2, time.Millisecond
			c := journalClient(t, s, j, newClock(), payonce.WithRetryPolicy(policy))
			_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("job-1"))
			require.Error(t, err)
			e, gerr := j.Get(t.Context(), "a55:client-1", "job-1")
			require.NoError(t, gerr)
			assert.Equal(t, payonce.JournalPending, e.State)
			assert.Positive(t, e.Attempts)
			assert.NotEmpty(t, e.LastCause)
			assert.NotEmpty(t, e.ErrorKind)
			firstAttempts := e.Attempts

			healthy.Store(true)
			// A new client (another process) without the key: the journal gives it.
			c2 := journalClient(t, s, j, newClock(), payonce.WithRetryPolicy(policy))
			var out chargeOut
			meta, err := c2.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("job-1"))
			require.NoError(t, err)
			assert.Equal(t, e.Key, meta.Key.String())
			for _, k := range s.sentKeys() {
				assert.Equal(t, e.Key, k, "every attempt of every run sends the same key")
			}
			e, _ = j.Get(t.Context(), "a55:client-1", "job-1")
			assert.Equal(t, payonce.JournalSucceeded, e.State)
			assert.Equal(t, firstAttempts+1, e.Attempts)
			assert.Empty(t, e.LastCause)
		})
	}
}

func TestJournalPendingPastTheGuardIsOutcomeUnknown(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	clk := newClock()
	c := journalClient(t, s, j, clk)
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-3"))
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	sent := s.calls.Load()

	clk.Advance(23*time.Hour + 30*time.Minute)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-3"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.Equal(t, sent, s.calls.Load(), "nothing sent")
	entry, ok := payonce.JournalEntryOf(err)
	require.True(t, ok)
	assert.Equal(t, "order-3", entry.Reference)
	assert.Equal(t, payonce.KeyOf(err).String(), entry.Key)
	assert.False(t, payonce.IsTemporary(err))
	assert.NotContains(t, err.Error(), "10.00")
}

func TestJournalSameReferenceOtherBodyIsAConflict(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	c := journalClient(t, s, j, newClock())
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-4"))
	require.NoError(t, err)
	_, err = c.Do(t.Context(), chargeReq("99.00"), nil, payonce.WithReference("order-4"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.Equal(t, int32(1), s.calls.Load())
	e, _ := j.Get(t.Context(), "a55:client-1", "order-4")
	assert.Equal(t, payonce.JournalSucceeded, e.State, "the conflict does not touch the entry")
}

func TestReferenceIsValidatedBeforeSending(t *testing.T) {
	s := newStub(t, okCharge)
	noJournal := journalClient(t, s, nil, newClock())
	_, err := noJournal.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-5"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)

	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	for name, ref := range map[string]string{"empty": "", "long": strings.Repeat("r", 256), "control": "order\n5"} {
		_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference(ref))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, name)
	}
	get := &payonce.Request{Operation: "charges.get", Method: http.MethodGet, Path: "/charge/1"}
	_, err = c.Do(t.Context(), get, nil, payonce.WithReference("read"))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest, "an unkeyed call cannot be journaled")
	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("nokey"), payonce.WithoutKey())
	require.ErrorIs(t, err, payonce.ErrInvalidRequest, "a call without a key cannot be journaled")
	assert.Zero(t, s.calls.Load())
	pending, err := j.Pending(t.Context(), journal.PendingQuery{})
	require.NoError(t, err)
	assert.Empty(t, pending)
}

func TestJournalRecordsNothingForRefusedInput(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	c := journalClient(t, s, j, newClock())
	req := chargeReq("1.00")
	req.Validate = func() error {
		return &payonce.ValidationError{Field: "card.number", Reason: "bad", Err: payonce.ErrInvalidCard}
	}
	_, err := c.Do(t.Context(), req, nil, payonce.WithReference("order-6"))
	require.ErrorIs(t, err, payonce.ErrInvalidCard)
	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-7"), payonce.WithKey(keytest.Key(t, "short", newClock().Now())))
	require.ErrorIs(t, err, payonce.ErrKeyTooShort)
	for _, ref := range []string{"order-6", "order-7"} {
		_, err := j.Get(t.Context(), "a55:client-1", ref)
		assert.ErrorIs(t, err, journal.ErrNotFound, ref)
	}
	assert.Zero(t, s.calls.Load())
}

// failing is a journal whose Reserve or Update fails on demand.
type failing struct {
	*journal.Memory
	reserveErr, updateErr error
}

func (f *failing) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if f.reserveErr != nil {
		return payonce.JournalEntry{}, false, f.reserveErr
	}
	return f.Memory.Reserve(ctx, e)
}

func (f *failing) Update(ctx context.Context, e payonce.JournalEntry) error {
	if f.updateErr != nil {
		return f.updateErr
	}
	return f.Memory.Update(ctx, e)
}

func TestJournalReserveFailureSendsNothing(t *testing.T) {
	j := &failing{Memory: journal.NewMemory(), reserveErr: errors.New("disk full")}
	s := newStub(t, okCharge)
	c := journalClient(t, s, j, newClock())
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-8"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	assert.NotEmpty(t, payonce.KeyOf(err).String())
	assert.True(t, payonce.IsTemporary(err), "nothing was sent: call again")
	assert.Zero(t, s.calls.Load())
}

// A crash between send and answer: the server executed, the journal could
// not record it. The error says so and keeps the key; the entry stays
// pending; the next run resumes with the same key (the server replays).
func TestJournalUpdateFailureAfterTheOperationRan(t *testing.T) {
	j := &failing{Memory: journal.NewMemory(), updateErr: errors.New("connection lost")}
	var mu sync.Mutex
	executed := map[string]int{}
	s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		executed[r.Header.Get(corekit.HeaderIdempotencyKey)]++
		first := executed[r.Header.Get(corekit.HeaderIdempotencyKey)] == 1
		mu.Unlock()
		if !first {
			w.Header().Set(corekit.HeaderReplay, "true")
		}
		okCharge(n, w, r)
	})
	c := journalClient(t, s, j, newClock())
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("1.00"), &out, payonce.WithReference("order-9"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	var we *payonce.JournalWriteError
	require.ErrorAs(t, err, &we)
	assert.NoError(t, we.Outcome, "the operation succeeded")
	assert.Contains(t, err.Error(), "recorded only in this error")
	assert.True(t, payonce.IsTemporary(err), "call again with the reference")
	assert.Equal(t, meta.Key, payonce.KeyOf(err))
	assert.Equal(t, "ch_1", out.ID, "the result was decoded")
	assert.False(t, payonce.KeyOf(err).Created().IsZero(), "the key carries its age")

	e, gerr := j.Get(t.Context(), "a55:client-1", "order-9")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State)

	j.updateErr = nil
	var again chargeOut
	m2, err := c.Do(t.Context(), chargeReq("1.00"), &again, payonce.WithReference("order-9"))
	require.NoError(t, err)
	assert.True(t, m2.Replayed)
	assert.Equal(t, meta.Key, m2.Key)
	assert.Len(t, executed, 1, "one key, so one execution")

	// A failed operation whose outcome cannot be recorded keeps its kind.
	j2 := &failing{Memory: journal.NewMemory(), updateErr: errors.New("connection lost")}
	s2 := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, `{"error":{"code":"CARD_DECLINED"}}`)
	})
	c2 := journalClient(t, s2, j2, newClock())
	_, err = c2.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-10"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	require.ErrorIs(t, err, a55.ErrCardDeclined)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusPaymentRequired, ae.StatusCode)
	assert.Equal(t, "CARD_DECLINED", ae.Code)
}

func TestJournalConcurrentCallsOfOneReferenceShareOneKey(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, okCharge)
	c := journalClient(t, s, j, newClock())
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Do(context.Background(), chargeReq("1.00"), nil, payonce.WithReference("order-11"))
		}()
	}
	wg.Wait()
	keys := map[string]bool{}
	for _, k := range s.sentKeys() {
		keys[k] = true
	}
	assert.Len(t, keys, 1)
}

// A 409 on a journaled operation means another run of it is in flight (the
// journal proved the body matches the key): it stays pending, never failed.
func TestJournalServerConflictStaysPending(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"code":"openapi_idempotency_key_conflict"}`)
	})
	c := journalClient(t, s, j, newClock())
	_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-12"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	e, gerr := j.Get(t.Context(), "a55:client-1", "order-12")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State)
}

// settledUnder is a journal in which a concurrent run settles the entry
// between this run's Reserve and its Update.
type settledUnder struct {
	*journal.Memory
}

func (s settledUnder) Update(ctx context.Context, e payonce.JournalEntry) error {
	if e.State == payonce.JournalPending {
		won := e
		won.State, won.Result, won.StatusCode = payonce.JournalSucceeded, []byte(`{"id":"ch_won"}`), 201
		if err := s.Memory.Update(ctx, won); err != nil {
			return err
		}
	}
	return s.Memory.Update(ctx, e)
}

func TestJournalConcurrentSettlementWins(t *testing.T) {
	j := settledUnder{journal.NewMemory()}
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	c := journalClient(t, s, j, newClock())
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("1.00"), &out, payonce.WithReference("order-13"))
	require.NoError(t, err, "the recorded success of the concurrent run is the outcome")
	assert.True(t, meta.FromJournal)
	assert.Equal(t, "ch_won", out.ID)
}

// cancelAfter cancels the call's context once the answer has arrived.
type cancelAfter struct {
	cancel context.CancelFunc
}

func (c cancelAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	c.cancel()
	return resp, err
}

// The caller's context ending with the operation does not stop the journal
// from recording the outcome.
func TestJournalRecordsTheOutcomeAfterTheContextEnded(t *testing.T) {
	j := journal.NewMemory()
	s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	ctx, cancel := context.WithCancel(t.Context())
	c := journalClient(t, s, j, newClock(), payonce.WithHTTPClient(&http.Client{Transport: cancelAfter{cancel}}))
	_, err := c.Do(ctx, chargeReq("1.00"), nil, payonce.WithReference("order-14"))
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, payonce.ErrJournal)
	e, gerr := j.Get(t.Context(), "a55:client-1", "order-14")
	require.NoError(t, gerr)
	assert.Equal(t, 1, e.Attempts, "the attempt is recorded")
	assert.Equal(t, payonce.JournalPending, e.State)

	done, cancelDone := context.WithCancel(t.Context())
	cancelDone()
	_, err = c.Do(done, chargeReq("1.00"), nil, payonce.WithReference("order-15"))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(1), s.calls.Load())
}
