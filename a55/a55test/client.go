package a55test

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/payoncetest"
)

// Client returns an a55.Client ready for the fake, acting for Account (its
// requests without a merchant or wallet name the fake's own merchant and
// wallet of the primary client): OAuth2 client credentials against the fake's token
// endpoint (a loopback base URL needs its token URL), the fake's URL as
// base URL and an *http.Client for it (API calls and token requests), the fake's
// clock (payoncetest.ClientClock: Clock().Advance ages the client's keys and
// card expiry checks as it ages the server's) and millisecond retries
// (payoncetest.FastRetryPolicy). opts come last and win:
// payonce.WithRetryPolicy(payonce.DefaultRetryPolicy()) restores the real
// backoff, payoncetest.ClientClock(time.Now) the local clock.
func (s *Server) Client(opts ...payonce.Option) (*a55.Client, error) {
	auth := a55.ClientCredentials(s.clientID, s.secret)
	auth.TokenURL = s.TokenURL()
	base := []payonce.Option{
		payonce.WithBaseURL(s.URL),
		payonce.WithHTTPClient(s.base),
		payonce.WithClock(s.Clock().Now),
		payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
	}
	c, err := a55.NewClient(auth, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	return c.WithAccount(s.Account()), nil
}
