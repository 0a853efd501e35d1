package a55test

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// Client returns an a55.Client ready for the fake: OAuth2 client
// credentials against the fake's token endpoint, the fake's URL as base URL
// and an *http.Client for it (API calls and token requests). opts come
// last and win; a test usually adds payonce.WithRetryPolicy with
// millisecond backoff.
func (s *Server) Client(opts ...payonce.Option) (*a55.Client, error) {
	auth := a55.ClientCredentials(s.clientID, s.secret)
	auth.TokenURL = s.TokenURL()
	base := []payonce.Option{payonce.WithBaseURL(s.URL), payonce.WithHTTPClient(s.srv.Client())}
	return a55.NewClient(auth, append(base, opts...)...)
}
