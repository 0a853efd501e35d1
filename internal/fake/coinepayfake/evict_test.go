package coinepayfake

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// With MaxOperations the card table keeps the newest cards only.
func TestCardsEvictedOverCap(t *testing.T) {
	e := fakeserver.New(fakeserver.Options{MaxOperations: 3})
	f := New(e, Config{})
	for i := range 5 {
		r := &fakeserver.Request{
			HTTP: httptest.NewRequest(http.MethodPost, PathApply, nil), Key: "k" + strconv.Itoa(i),
			Body: []byte(`{"header_id":"h","package_id":"p"}`), Credential: "demo-key",
		}
		require.Equal(t, 200, f.apply(r).Status)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.cards, 3)
	assert.Len(t, f.order["demo-key"], 3)
	assert.Len(t, f.all, 3)
	for _, id := range f.order["demo-key"] {
		assert.Contains(t, f.cards, id)
	}
}
