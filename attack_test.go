package payonce

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Attacks on the hardening, as an outside reviewer would run them: each
// test failed before the fix it names.

// A redirect whose Location cannot be parsed is refused like any other
// redirect: final, not retried, and the Location (its query above all)
// stays out of the error and its causes.
func TestUnparseableLocationIsARefusedRedirectWithoutItsQuery(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Location", "/x%zz?session=SECRETVALUE")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL), WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrRedirectRefused)
	assert.False(t, IsTemporary(err))
	assert.Equal(t, 1, n, "a redirect is not retried")
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.NotEmpty(t, ae.Key)
	assert.False(t, ae.KeyCreated.IsZero())
	assert.Equal(t, http.StatusTemporaryRedirect, ae.StatusCode)
	for e := error(ae); e != nil; e = errors.Unwrap(e) {
		assert.NotContains(t, e.Error(), "SECRETVALUE")
	}
	assert.NotContains(t, ae.Err.Error(), "SECRETVALUE")
}
