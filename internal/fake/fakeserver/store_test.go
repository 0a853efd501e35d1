package fakeserver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFingerprintCanonicalJSON(t *testing.T) {
	a := FingerprintOf("POST", "/x", []byte(`{"a":1,"b":{"c":"d","e":[1,2]}}`))
	b := FingerprintOf("POST", "/x", []byte("{ \"b\" : {\"e\":[1, 2], \"c\":\"d\"},\n\"a\":1 }"))
	assert.Equal(t, a, b, "key order and whitespace do not matter")
	assert.NotEqual(t, a, FingerprintOf("POST", "/y", []byte(`{"a":1,"b":{"c":"d","e":[1,2]}}`)))
	assert.NotEqual(t, a, FingerprintOf("PUT", "/x", []byte(`{"a":1,"b":{"c":"d","e":[1,2]}}`)))
	assert.NotEqual(t, a, FingerprintOf("POST", "/x", []byte(`{"a":1,"b":{"c":"d","e":[2,1]}}`)))
	assert.NotEqual(t, FingerprintOf("POST", "/x", []byte("not json")), FingerprintOf("POST", "/x", []byte("not  json")),
		"a body that is not JSON is hashed raw")
	assert.NotEqual(t, FingerprintOf("POST", "/x", []byte(`{"a":1} {"a":2}`)), FingerprintOf("POST", "/x", []byte(`{"a":1}`)))
	assert.Equal(t, FingerprintOf("POST", "/x", nil), FingerprintOf("POST", "/x", []byte("  ")))
}

func ok200(body string) func() Response {
	return func() Response { return Response{Status: 200, Body: []byte(body)} }
}

func TestStoreSemantics(t *testing.T) {
	clk := NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewStore(StoreConfig{Clock: clk})
	ctx := context.Background()
	fp := FingerprintOf("POST", "/p", []byte(`{}`))
	other := FingerprintOf("POST", "/p", []byte(`{"x":1}`))

	r, out, err := s.Do(ctx, "c", "k", fp, ok200("one"))
	require.NoError(t, err)
	assert.Equal(t, Executed, out)
	assert.Equal(t, "one", string(r.Body))
	r, out, _ = s.Do(ctx, "c", "k", fp, ok200("two"))
	assert.Equal(t, Replayed, out)
	assert.Equal(t, "one", string(r.Body))
	_, out, _ = s.Do(ctx, "c", "k", other, ok200("three"))
	assert.Equal(t, Conflict, out)
	_, out, _ = s.Do(ctx, "other-credential", "k", other, ok200("four"))
	assert.Equal(t, Executed, out, "keys are scoped per credential")

	// Only 2xx stored.
	for _, st := range []int{400, 409, 500, 503} {
		_, out, _ = s.Do(ctx, "c", "k4", fp, func() Response { return Response{Status: st} })
		assert.Equal(t, Executed, out)
	}
	_, out, _ = s.Do(ctx, "c", "k4", fp, ok200("x"))
	assert.Equal(t, Executed, out)

	// Window.
	clk.Advance(24*time.Hour - time.Second)
	_, out, _ = s.Do(ctx, "c", "k", fp, ok200("five"))
	assert.Equal(t, Replayed, out)
	clk.Advance(time.Second)
	r, out, _ = s.Do(ctx, "c", "k", other, ok200("six"))
	assert.Equal(t, Executed, out, "after 24 h the key is new, even with another body")
	assert.Equal(t, "six", string(r.Body))
}

func TestStoreSizeCap(t *testing.T) {
	s := NewStore(StoreConfig{})
	ctx := context.Background()
	fp := FingerprintOf("POST", "/p", nil)
	big := make([]byte, DefaultMaxStoredBody+1)
	n := 0
	exec := func() Response { n++; return Response{Status: 200, Body: big} }
	s.Do(ctx, "c", "k", fp, exec)
	_, out, _ := s.Do(ctx, "c", "k", fp, exec)
	assert.Equal(t, Unavailable, out, "not kept, but never executed twice")
	assert.Equal(t, 1, n)
	exact := func() Response { return Response{Status: 200, Body: big[:DefaultMaxStoredBody]} }
	s.Do(ctx, "c", "k2", fp, exact)
	_, out, _ = s.Do(ctx, "c", "k2", fp, exact)
	assert.Equal(t, Replayed, out, "256 KB exactly is stored")
}

// TestStoreMaxStoredKeepsCompactMarkers: over MaxStored the oldest
// answers are dropped and their keys kept as compact markers outside the
// entries, still refusing a second execution until the window ends.
func TestStoreMaxStoredKeepsCompactMarkers(t *testing.T) {
	clk := NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewStore(StoreConfig{Clock: clk, MaxStored: 2})
	ctx := context.Background()
	fp := FingerprintOf("POST", "/p", []byte(`{"a":1}`))
	other := FingerprintOf("POST", "/p", []byte(`{"a":2}`))
	runs := 0
	exec := func() Response { runs++; return Response{Status: 200, Body: []byte("answer")} }
	keys := []string{"k1", "k2", "k3", "k4", "k5"}
	for _, k := range keys {
		_, out, err := s.Do(ctx, "c", k, fp, exec)
		require.NoError(t, err)
		require.Equal(t, Executed, out)
	}
	assert.Equal(t, 5, s.Len())
	assert.Len(t, s.entries, 2, "only the kept answers are entries")
	assert.Len(t, s.markers, 3)
	for _, k := range keys[3:] {
		resp, out, _ := s.Do(ctx, "c", k, fp, exec)
		assert.Equal(t, Replayed, out, k)
		assert.Equal(t, "answer", string(resp.Body))
	}
	for _, k := range keys[:3] {
		_, out, _ := s.Do(ctx, "c", k, fp, exec)
		assert.Equal(t, Unavailable, out, k)
		_, out, _ = s.Do(ctx, "c", k, other, exec)
		assert.Equal(t, Conflict, out, k)
		assert.True(t, s.Holds("c", k), k)
		_, out, _ = s.Do(ctx, "other-scope", k, fp, exec)
		assert.Equal(t, Executed, out, "a marker belongs to its scope")
	}
	assert.Equal(t, 8, runs)
	clk.Advance(24 * time.Hour)
	assert.False(t, s.Holds("c", "k1"), "the window ended")
	_, out, _ := s.Do(ctx, "c", "k1", fp, exec)
	assert.Equal(t, Executed, out, "after its window a key is new, as the providers document")
	s.Reset()
	assert.Equal(t, 0, s.Len())
}

func TestStoreInFlight(t *testing.T) {
	s := NewStore(StoreConfig{})
	ctx := context.Background()
	fp := FingerprintOf("POST", "/p", []byte(`{"a":1}`))
	release := make(chan struct{})
	var runs atomic.Int32
	exec := func() Response {
		runs.Add(1)
		<-release
		return Response{Status: 201, Body: []byte("final")}
	}
	var wg sync.WaitGroup
	results := make([]Response, 6)
	outcomes := make([]Outcome, 6)
	wg.Add(1)
	go func() { defer wg.Done(); results[0], outcomes[0], _ = s.Do(ctx, "c", "k", fp, exec) }()
	require.Eventually(t, func() bool { return runs.Load() == 1 }, 10*time.Second, time.Millisecond)
	for i := 1; i < 6; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], outcomes[i], _ = s.Do(ctx, "c", "k", fp, exec) }()
	}
	// Another body while in flight: conflict at once.
	_, out, _ := s.Do(ctx, "c", "k", FingerprintOf("POST", "/p", []byte(`{"a":2}`)), exec)
	assert.Equal(t, Conflict, out)
	// A waiter that gives up.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	_, _, err := s.Do(cctx, "c", "k", fp, exec)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	wg.Wait()
	assert.EqualValues(t, 1, runs.Load())
	for i, r := range results {
		assert.Equal(t, 201, r.Status)
		assert.Equal(t, "final", string(r.Body))
		if i > 0 {
			assert.Equal(t, Replayed, outcomes[i])
		}
	}
}

func TestStoreInFlightFailureIsShared(t *testing.T) {
	s := NewStore(StoreConfig{})
	ctx := context.Background()
	fp := FingerprintOf("POST", "/p", nil)
	release := make(chan struct{})
	started := make(chan struct{})
	go s.Do(ctx, "c", "k", fp, func() Response { close(started); <-release; return Response{Status: 400, Body: []byte("no")} })
	<-started
	done := make(chan Outcome)
	// Released once the second request waits on the first (it asks its
	// context for Done only there), not after a sleep it can outlast.
	waiting := &doneSpy{Context: ctx, called: make(chan struct{})}
	go func() { _, out, _ := s.Do(waiting, "c", "k", fp, ok200("yes")); done <- out }()
	<-waiting.called
	close(release)
	assert.Equal(t, Shared, <-done)
	_, out, _ := s.Do(ctx, "c", "k", fp, ok200("yes"))
	assert.Equal(t, Executed, out, "the failure was not stored")
}

func TestStorePanicReleasesWaiters(t *testing.T) {
	s := NewStore(StoreConfig{})
	fp := FingerprintOf("POST", "/p", nil)
	assert.Panics(t, func() {
		s.Do(context.Background(), "c", "k", fp, func() Response { panic("boom") })
	})
	_, out, _ := s.Do(context.Background(), "c", "k", fp, ok200("ok"))
	assert.Equal(t, Executed, out)
}

func TestStoreSweep(t *testing.T) {
	clk := NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewStore(StoreConfig{Clock: clk})
	for i := range 100 {
		s.Do(context.Background(), "c", string(rune('a'+i)), Fingerprint{}, ok200("x"))
	}
	assert.Equal(t, 100, s.Len())
	clk.Advance(25 * time.Hour)
	s.Do(context.Background(), "c", "new", Fingerprint{}, ok200("x"))
	assert.Equal(t, 1, s.Len(), "expired entries are swept")
	s.Reset()
	assert.Equal(t, 0, s.Len())
}

func TestClock(t *testing.T) {
	c := NewClock()
	assert.WithinDuration(t, time.Now(), c.Now(), time.Second)
	c.Advance(time.Hour)
	assert.WithinDuration(t, time.Now().Add(time.Hour), c.Now(), time.Second)
	at := time.Date(2031, 5, 1, 0, 0, 0, 0, time.UTC)
	c.Set(at)
	assert.WithinDuration(t, at, c.Now(), time.Second)
	f := NewFixedClock(at)
	f.Advance(time.Minute)
	assert.Equal(t, at.Add(time.Minute), f.Now())
	f.Set(at)
	assert.Equal(t, at, f.Now())
}

func TestRuleJSON(t *testing.T) {
	for _, s := range []string{
		`{"fault":"drop_after_commit","path":"/api/v1/bank/wallet/charge/","count":1}`,
		`{"fault":"error_before_commit","status":503}`,
		`{"fault":"rate_limit","retry_after":1}`,
		`{"fault":"delay","delay":"200ms","when":"before"}`,
		`{"fault":"reset_before_read","nth":2}`,
		`{"fault":"hang","idempotency_key":"k","probability":0.5}`,
	} {
		var r Rule
		require.NoError(t, json.Unmarshal([]byte(s), &r), s)
		require.NoError(t, r.Validate(), s)
		out, err := json.Marshal(r)
		require.NoError(t, err)
		var back Rule
		require.NoError(t, json.Unmarshal(out, &back))
		assert.Equal(t, r, back)
	}
	var r Rule
	require.NoError(t, json.Unmarshal([]byte(`{"fault":"delay","delay":"200ms"}`), &r))
	assert.Equal(t, 200*time.Millisecond, r.Delay)
	assert.Error(t, json.Unmarshal([]byte(`{"fault":"delay","delay":"soon"}`), &r))
	require.NoError(t, json.Unmarshal([]byte(`{"fault":"delay","delay":15}`), &r))
	assert.Equal(t, 15*time.Millisecond, r.Delay)
}

func TestFaultMatching(t *testing.T) {
	f := NewFaults(1, 0)
	require.NoError(t, f.Add(Rule{Fault: Hang, Path: "/a/*", IdempotencyKey: "k", Nth: 2}))
	require.NoError(t, f.Add(Rule{Fault: RateLimit, Provider: "coinepay", Count: 1}))
	assert.Nil(t, f.Pick("a55", "/a/b", "k"))
	assert.Nil(t, f.Pick("a55", "/b", "k"))
	assert.Nil(t, f.Pick("a55", "/a/b", "other"))
	got := f.Pick("a55", "/a/c", "k")
	require.NotNil(t, got)
	assert.Equal(t, Hang, got.Kind)
	assert.Nil(t, f.Pick("a55", "/a/c", "k"), "nth fires once")
	got = f.Pick("coinepay", "/x", "")
	require.NotNil(t, got)
	assert.Equal(t, 1, got.RetryAfter)
	assert.Nil(t, f.Pick("coinepay", "/x", ""), "count caps firings")
	rules := f.Rules()
	assert.Equal(t, 3, rules[0].Seen)
	assert.Equal(t, 1, rules[0].Fired)
	f.Clear()
	assert.Empty(t, f.Rules())
}

func TestFaultProbabilityDeterministic(t *testing.T) {
	draw := func(seed uint64) []bool {
		f := NewFaults(seed, 0)
		require.NoError(t, f.Add(Rule{Fault: DropAfterCommit, Probability: 0.3}))
		out := make([]bool, 200)
		for i := range out {
			out[i] = f.Pick("a55", "/", "") != nil
		}
		return out
	}
	a, b := draw(42), draw(42)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, draw(43))
	n := 0
	for _, v := range a {
		if v {
			n++
		}
	}
	assert.InDelta(t, 60, n, 25)
}

func TestLedgerAndAttemptLog(t *testing.T) {
	var l Ledger
	l.Record(Operation{Kind: "a", IdempotencyKey: "k"})
	l.Record(Operation{Kind: "b", IdempotencyKey: "k"})
	l.Record(Operation{Kind: "a", IdempotencyKey: "j"})
	assert.Equal(t, 2, l.Count("k"))
	assert.True(t, l.ExecutedOnce("j"))
	assert.Equal(t, 2, l.CountKind("a"))
	assert.Len(t, l.ByKey("k"), 2)
	l.Reset()
	assert.Equal(t, 0, l.Len())

	log := NewAttemptLog(3)
	for i := range 5 {
		log.Add(Attempt{Status: i})
	}
	all := log.All()
	require.Len(t, all, 3)
	assert.Equal(t, []int{2, 3, 4}, []int{all[0].Status, all[1].Status, all[2].Status})
	log.Add(Attempt{IdempotencyKey: "x"})
	assert.Len(t, log.ByKey("x"), 1)
	log.Reset()
	assert.Empty(t, log.All())
}

func TestEngineStatsAndAdmin(t *testing.T) {
	e := New(Options{})
	e.stats.add(&Attempt{Executed: true, Replayed: true, Conflict: true, Fault: Hang})
	assert.Equal(t, Stats{Requests: 1, Executed: 1, Replayed: 1, Conflicts: 1, Faults: 1}, e.Stats())
	e.Reset()
	assert.Equal(t, Stats{}, e.Stats())
}

// doneSpy is a context that reports the first call of its Done method: a
// request waiting on one in flight selects on it.
type doneSpy struct {
	context.Context
	once   sync.Once
	called chan struct{}
}

func (c *doneSpy) Done() <-chan struct{} {
	c.once.Do(func() { close(c.called) })
	return c.Context.Done()
}

// A negative MaxBody keeps every answer, however large (A55 documents no cap).
func TestStoreWithoutCap(t *testing.T) {
	s := NewStore(StoreConfig{MaxBody: -1})
	fp := FingerprintOf("POST", "/p", nil)
	big := make([]byte, 300<<10)
	runs := 0
	exec := func() Response { runs++; return Response{Status: 200, Body: big} }
	for range 3 {
		s.Do(context.Background(), "c", "k", fp, exec)
	}
	assert.Equal(t, 1, runs)
}

// Two different bodies that are not valid UTF-8 are two payloads.
func TestFingerprintInvalidUTF8(t *testing.T) {
	a := FingerprintOf("POST", "/x", []byte("{\"d\":\"\xff\"}"))
	b := FingerprintOf("POST", "/x", []byte("{\"d\":\"\xfe\"}"))
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, FingerprintOf("POST", "/x", []byte("{\"d\":\"\xff\"}")))
	assert.Equal(t, FingerprintOf("POST", "/x", []byte(`{"d":"é"}`)), FingerprintOf("POST", "/x", []byte(`{ "d" : "é" }`)),
		"valid UTF-8 is still canonical")
}

// A fixed clock does not make every request sweep the whole store.
func TestStoreSweepsOnlyWhenTimeMoved(t *testing.T) {
	clk := NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewStore(StoreConfig{Clock: clk})
	for i := range 50 {
		s.Do(context.Background(), "c", string(rune('a'+i)), Fingerprint{}, ok200("x"))
	}
	assert.Equal(t, 1, s.sweeps, "one sweep at the first request, none while the clock stands")
	clk.Advance(-time.Hour)
	s.Do(context.Background(), "c", "back", Fingerprint{}, ok200("x"))
	clk.Advance(time.Hour + 25*time.Hour)
	s.Do(context.Background(), "c", "late", Fingerprint{}, ok200("x"))
	assert.Equal(t, 1, s.Len(), "a clock moved back then forward still sweeps")
}
