package main

import (
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
)

// Environment variables the lookups read, beside a55's own (a55.EnvClientID,
// a55.EnvClientSecret, a55.EnvTokenURL, a55.EnvAccessToken).
const (
	// EnvA55BaseURL is the A55 API base URL; unset: A55's sandbox.
	EnvA55BaseURL = "A55_BASE_URL"
	// EnvCoinepayAPIKey, EnvCoinepayAPISecret and EnvCoinepayBaseURL are
	// the Coinepay credentials and base URL (all required).
	EnvCoinepayAPIKey    = "COINEPAY_API_KEY"
	EnvCoinepayAPISecret = "COINEPAY_API_SECRET"
	EnvCoinepayBaseURL   = "COINEPAY_BASE_URL"
	// EnvScope is the scope the application gave payonce.WithScope, when
	// it named one: the lookup client records under it.
	EnvScope = "PAYONCE_SCOPE"
)

// clientOptions are the options both lookup clients take.
func clientOptions(j journal.Store, getenv func(string) string, d deps) []payonce.Option {
	opts := []payonce.Option{payonce.WithJournal(j)}
	if s := getenv(EnvScope); s != "" {
		opts = append(opts, payonce.WithScope(s))
	}
	if d.httpClient != nil {
		opts = append(opts, payonce.WithHTTPClient(d.httpClient))
	}
	if d.now != nil {
		opts = append(opts, corekit.WithClock(d.now))
	}
	return opts
}

func a55FromEnv(j journal.Store, getenv func(string) string, d deps, extra ...payonce.Option) (*a55.Client, error) {
	auth := a55.Auth{AccessToken: getenv(a55.EnvAccessToken)}
	if auth.AccessToken == "" {
		auth = a55.Auth{ClientID: getenv(a55.EnvClientID), ClientSecret: getenv(a55.EnvClientSecret), TokenURL: getenv(a55.EnvTokenURL)}
		if auth.ClientID == "" || auth.ClientSecret == "" {
			return nil, usageErr("an a55 lookup needs %s and %s (or %s) in the environment", a55.EnvClientID, a55.EnvClientSecret, a55.EnvAccessToken)
		}
	}
	opts := append(clientOptions(j, getenv, d), extra...)
	if u := getenv(EnvA55BaseURL); u != "" {
		opts = append([]payonce.Option{payonce.WithBaseURL(u)}, opts...)
	}
	c, err := a55.NewClient(auth, opts...)
	if err != nil {
		return nil, fmt.Errorf("a55 client: %w", err)
	}
	return c, nil
}

func coinepayFromEnv(j journal.Store, getenv func(string) string, d deps, extra ...payonce.Option) (*coinepay.Client, error) {
	key, secret, base := getenv(EnvCoinepayAPIKey), getenv(EnvCoinepayAPISecret), getenv(EnvCoinepayBaseURL)
	if key == "" || secret == "" || base == "" {
		return nil, usageErr("a coinepay lookup needs %s, %s and %s in the environment", EnvCoinepayAPIKey, EnvCoinepayAPISecret, EnvCoinepayBaseURL)
	}
	c, err := coinepay.NewClient(key, secret, append(append([]payonce.Option{payonce.WithBaseURL(base)}, clientOptions(j, getenv, d)...), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("coinepay client: %w", err)
	}
	return c, nil
}
