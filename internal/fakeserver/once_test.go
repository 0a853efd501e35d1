package fakeserver

import (
	"context"
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
