package payonce

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An attempt must always have a timeout.
func TestAttemptWithoutTimeoutIsRefused(t *testing.T) {
	p := fastPolicy()
	p.AttemptTimeout = 0
	_, err := NewClient(WithBaseURL("https://api.example"), WithRetryPolicy(p), WithHTTPClient(&http.Client{}))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewClient(WithBaseURL("https://api.example"), WithRetryPolicy(p), WithHTTPClient(&http.Client{Timeout: time.Second}))
	require.NoError(t, err, "the http.Client's own timeout is enough")
	_, err = NewClient(WithBaseURL("https://api.example"), WithRetryPolicy(p))
	require.NoError(t, err, "the default http.Client has a timeout")
}
