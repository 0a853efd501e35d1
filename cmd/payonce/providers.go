package main

import (
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/journal"
)

// Environment variables the lookups read, beside a55's own (a55.EnvClientID,
// a55.EnvClientSecret, a55.EnvTokenURL, a55.EnvAccessToken).
const (
	// EnvA55Environment names the A55 environment: sandbox (the
	// default), production or production-core-manager (a55.Environment).
	EnvA55Environment = "A55_ENVIRONMENT"
	// EnvA55BaseURL is an A55 API base URL of another origin (a proxy);
	// it needs A55_TOKEN_URL.
	EnvA55BaseURL = "A55_BASE_URL"
	// EnvA55WalletUUID is the wallet a lookup lists when the entry's
	// summary names none.
	EnvA55WalletUUID = "A55_WALLET_UUID"
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
		opts = append(opts, payonce.WithClock(d.now))
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
	if e := getenv(EnvA55Environment); e != "" {
		opts = append([]payonce.Option{a55.WithEnvironment(a55.Environment(e))}, opts...)
	}
	if u := getenv(EnvA55BaseURL); u != "" {
		opts = append([]payonce.Option{payonce.WithBaseURL(u)}, opts...)
	}
	c, err := a55.NewClient(auth, opts...)
	if err != nil {
		return nil, fmt.Errorf("a55 client: %w", err)
	}
	if w := getenv(EnvA55WalletUUID); w != "" {
		c = c.WithAccount(a55.Account{WalletUUID: w})
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
