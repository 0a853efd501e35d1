package coinepaytest

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
)

// Client returns a coinepay.Client configured for the fake: its base URL,
// its credentials and an HTTP client for its listener. The client signs
// with the local clock, as a merchant's would; the fake's clock may differ
// (Clock().Advance), which the client corrects from the Date header of the
// first openapi_timestamp_expired answer. Pass payonce.WithSigner(s.Signer())
// to sign on the fake's clock instead. The caller's options come last and
// win (a fast payonce.WithRetryPolicy keeps tests quick).
func (s *Server) Client(opts ...payonce.Option) (*coinepay.Client, error) {
	base := []payonce.Option{
		payonce.WithBaseURL(s.URL),
		payonce.WithHTTPClient(s.srv.Client()),
	}
	return coinepay.NewClient(s.apiKey, s.secret, append(base, opts...)...)
}
