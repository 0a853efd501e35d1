package fakeserver

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer too large to keep must not let the same key run again: the
// store keeps a marker and a repeat answers Unavailable.
func TestStoreNeverExecutesTwiceForOneKey(t *testing.T) {
	clk := NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewStore(StoreConfig{Clock: clk, MaxBody: 10})
	ctx := context.Background()
	fp := FingerprintOf("POST", "/p", []byte(`{"a":1}`))
	runs := 0
	exec := func() Response { runs++; return Response{Status: 200, Body: []byte("more than ten bytes")} }
	r, out, err := s.Do(ctx, "c", "k", fp, exec)
	require.NoError(t, err)
	assert.Equal(t, Executed, out)
	assert.Equal(t, "more than ten bytes", string(r.Body), "the first caller gets its answer")
	for range 3 {
		_, out, err = s.Do(ctx, "c", "k", fp, exec)
		require.NoError(t, err)
		assert.Equal(t, Unavailable, out)
	}
	assert.Equal(t, 1, runs)
	_, out, _ = s.Do(ctx, "c", "k", FingerprintOf("POST", "/p", []byte(`{"a":2}`)), exec)
	assert.Equal(t, Conflict, out, "another payload under the key is still a conflict")
	clk.Advance(24 * time.Hour)
	_, out, _ = s.Do(ctx, "c", "k", fp, exec)
	assert.Equal(t, Executed, out, "after the window the key is new")
	assert.Equal(t, 2, runs)
}

// sizedBackend answers a keyed operation with as many bytes as the body
// asks for (400 for a negative size) and counts its commits per key.
type sizedBackend struct {
	testBackend
	mu      sync.Mutex
	commits map[string]int
}

func (b *sizedBackend) Route(method, path string) (Route, Problem) {
	return Route{Kind: "op", Keyed: true, Handle: func(r *Request) Response {
		var in struct{ Size int }
		_ = json.Unmarshal(r.Body, &in)
		if in.Size < 0 {
			return JSON(400, map[string]string{"error": "no"})
		}
		b.mu.Lock()
		b.commits[r.Key]++
		b.mu.Unlock()
		return Response{Status: 200, Body: []byte(`"` + strings.Repeat("a", in.Size) + `"`)}
	}}, ProblemNone
}

// The engine's invariant: whatever the answer size, the caps, the faults
// and the concurrency, an operation runs at most once to a 2xx answer per
// key within the window.
func TestEngineNeverExecutesTwiceForOneKey(t *testing.T) {
	e := New(Options{Seed: 7, Seeded: true, MaxOperations: 5})
	require.NoError(t, e.Faults().Add(Rule{Fault: DropAfterCommit, Probability: 0.2}))
	b := &sizedBackend{testBackend: testBackend{e}, commits: map[string]int{}}
	srv := httptest.NewServer(e.Handler(ProviderConfig{Name: "test", MaxStoredBody: 64}, b))
	defer srv.Close()

	rng := rand.New(rand.NewPCG(1, 2))
	sizes := map[string]int{}
	for i := range 30 {
		sizes["key-"+strconv.Itoa(i)] = []int{-1, 10, 64, 65, 1000}[rng.IntN(5)]
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range 60 {
				key := "key-" + strconv.Itoa(r.IntN(30))
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/op", strings.NewReader(`{"size":`+strconv.Itoa(sizes[key])+`}`))
				req.Header.Set(HeaderIdempotencyKey, key)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	require.NotEmpty(t, b.commits)
	for key, n := range b.commits {
		assert.Equal(t, 1, n, "%s (answer of %d bytes) committed %d times", key, sizes[key], n)
	}
}
