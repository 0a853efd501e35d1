package coinepaytest

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/payoncetest"
)

// Client returns a coinepay.Client configured for the fake: its base URL,
// its credentials, an HTTP client for its listener, the fake's clock
// (payoncetest.ClientClock: the client's key-age guard and its signatures read
// it, so Clock().Advance moves what both sides see) and millisecond
// retries (payoncetest.FastRetryPolicy). The caller's options come last and
// win: payonce.WithRetryPolicy(payonce.DefaultRetryPolicy()) restores the
// real backoff; payoncetest.ClientClock(time.Now) signs with the local clock, as
// a merchant's host would, so that a moved fake clock exercises the
// client's clock-skew correction.
func (s *Server) Client(opts ...payonce.Option) (*coinepay.Client, error) {
	base := []payonce.Option{
		payonce.WithBaseURL(s.URL),
		payonce.WithHTTPClient(s.base),
		payonce.WithClock(s.Clock().Now),
		payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
	}
	return coinepay.NewClient(s.apiKey, s.secret, append(base, opts...)...)
}
