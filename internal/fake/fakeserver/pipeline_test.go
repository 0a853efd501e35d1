package fakeserver

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// preemptBackend is testBackend answering 409 itself, ahead of the
// store, to the keyed requests whose key it is told.
type preemptBackend struct {
	testBackend
	key   atomic.Pointer[string]
	asked atomic.Int32
}

func (b *preemptBackend) Preempt(r *Request) *Response {
	b.asked.Add(1)
	if k := b.key.Load(); k == nil || *k != r.Key {
		return nil
	}
	r.Attempt.Answer = "DUPLICATE"
	resp := JSON(http.StatusConflict, map[string]string{"code": "DUPLICATE"})
	return &resp
}

// A Preempter answers a keyed request ahead of the store, whatever the
// store holds: nothing runs, nothing is stored, and the stored answer is
// there again once it lets requests through. A request without a key is
// never put to it.
func TestPreempterAnswersAheadOfTheStore(t *testing.T) {
	e := New(Options{})
	b := &preemptBackend{testBackend: testBackend{e}}
	srv := httptest.NewServer(e.Handler(ProviderConfig{Name: "test"}, b))
	t.Cleanup(srv.Close)

	status, first := do(t, http.MethodPost, srv.URL+"/op", "key-1", `{}`)
	require.Equal(t, http.StatusOK, status)
	key := "key-1"
	b.key.Store(&key)
	status, got := do(t, http.MethodPost, srv.URL+"/op", "key-1", `{}`)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DUPLICATE", got["code"])
	status, _ = do(t, http.MethodPost, srv.URL+"/op", "key-1", `{"other":"payload"}`)
	assert.Equal(t, http.StatusConflict, status, "ahead of the store's own conflict too")
	atts := e.Attempts().All()
	last := atts[len(atts)-1]
	assert.Equal(t, "DUPLICATE", last.Answer)
	assert.False(t, last.Executed)
	assert.False(t, last.Replayed)

	b.key.Store(nil)
	status, again := do(t, http.MethodPost, srv.URL+"/op", "key-1", `{}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, first, again, "the stored answer")
	assert.Equal(t, 1, e.Ledger().Count("key-1"))

	asked := b.asked.Load()
	status, _ = do(t, http.MethodPost, srv.URL+"/op", "", `{}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, asked, b.asked.Load(), "no key, nothing to preempt")
}
