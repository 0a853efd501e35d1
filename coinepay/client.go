// Package coinepay is the typed client of a Coinepay-style card OpenAPI:
// issue cards (Cards.Apply), fund them (Cards.Recharge) and read them
// (Cards.Info, Cards.List, Cards.All), each business operation executed
// exactly once however often the network makes the client retry.
//
// It is a thin layer on the payonce core: the core resolves one
// Idempotency-Key per business operation, checks it against Coinepay's
// rules before sending (required, at most 128 URL-safe characters), keeps
// the key and the body bytes identical on every attempt, signs every
// attempt afresh (new nonce, timestamp and HMAC signature), retries only
// what can succeed, and maps every message_key to a payonce sentinel:
//
//	client, err := coinepay.NewClient(apiKey, apiSecret, payonce.WithBaseURL(baseURL), payonce.WithExplicitKeys())
//	res, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
//	switch {
//	case errors.Is(err, ErrInsufficientBalance):
//		// top up, then run the same operation again with payonce.WithKey(payonce.KeyOf(err))
//	case errors.Is(err, payonce.ErrIdempotencyConflict):
//		// the key was used for another body: a bug in the caller
//	case err != nil:
//		// store payonce.KeyOf(err) (MarshalText); resume with payonce.WithKey
//	}
//	fmt.Println(res.CardID, res.Meta.Replayed, res.Meta.Attempts)
//
// There is no public Coinepay base URL: pass payonce.WithBaseURL.
package coinepay

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// ProviderName names Coinepay in errors and logs.
const ProviderName = "coinepay"

// API paths of the Coinepay card OpenAPI.
const (
	PathCardApply    = "/api/v1/openapi/card/apply"
	PathCardRecharge = "/api/v1/openapi/card/recharge"
	PathCardInfo     = "/api/v1/openapi/card/info"
	PathCardList     = "/api/v1/openapi/card/list"
)

// Client is a Coinepay OpenAPI client. It is safe for concurrent use; make
// one per API key and share it.
type Client struct {
	core   *payonce.Client
	view   payonce.Settings // what core resolved (payonce.Client.Settings)
	signer *HMACSigner

	// Cards issues, funds and reads cards.
	Cards *CardsService
}

// NewClient returns a client for the API key apiKey (sent as X-Api-Key)
// and its secret (the HMAC key; it never leaves the process). The
// Coinepay defaults come first: Coinepay's key rules, the envelope codec
// and an HMAC-SHA256 signer under the project's scheme that reads the
// client's clock (time.Now; payoncetest.ClientClock in tests). The caller's
// options follow and win: payonce.WithBaseURL is required,
// payonce.WithSigner replaces the default signer for a deployment whose
// scheme differs, payonce.WithRetryPolicy, payonce.WithLogger and
// payonce.WithHTTPClient tune the rest. Errors wrap
// payonce.ErrInvalidConfig and never contain the secret.
func NewClient(apiKey, secret string, opts ...payonce.Option) (*Client, error) {
	// The default signer reads the client's clock (payoncetest.ClientClock in tests), so
	// that one clock dates both the key-age guard and the signatures.
	var core *payonce.Client
	signer, err := NewHMACSigner(apiKey, secret, WithSignerClock(func() time.Time { return core.Settings().Now() }))
	if err != nil {
		return nil, fmt.Errorf("coinepay: %w", err)
	}
	p := provider()
	p.ScopeIdentity = scopeIdentity(apiKey, secret) // the core adds the base URL's origin
	p.LegacyScopes = legacyScopes(apiKey)           // the scopes of earlier versions: never missed (payonce.WithLegacyScopes)
	base := []payonce.Option{
		payonce.WithProvider(p),
		payonce.WithFingerprintKey([]byte(secret)), // journal fingerprints keyed, never a plain digest of a body
		payonce.WithSigner(signer),
	}
	core, err = payonce.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("coinepay: %w", err)
	}
	for _, c := range []string{apiKey, secret} {
		if len(c) >= 8 && strings.Contains(core.Scope(), c) {
			return nil, fmt.Errorf("%w: coinepay: the journal scope holds the API key or secret: name the account instead", payonce.ErrInvalidConfig)
		}
	}
	c := &Client{core: core, view: core.Settings(), signer: signer}
	c.Cards = &CardsService{client: c}
	return c, nil
}

// Core returns the underlying payonce client, for requests the typed
// services do not cover (they get the same keys, signing and retries).
func (c *Client) Core() *payonce.Client { return c.core }

// ClockOffset returns the server-minus-local clock offset the default
// signer learned from an openapi_timestamp_expired answer (0 until then, or
// when a caller's signer replaced the default).
func (c *Client) ClockOffset() time.Duration { return c.signer.ClockOffset() }

// Scope is the journal scope a client with this API key and secret on
// baseURL records its operations under: corekit.ScopeOf the identity
// "coinepay:" and the first 32 hex digits of HMAC-SHA256(secret, API key),
// and the base URL's origin. The API key is itself a credential, so the
// scope holds a digest keyed with the secret: it identifies the key
// without letting anyone who reads the journal confirm a guessed one.
// Rotating the secret changes the scope (docs/journal.md).
func Scope(apiKey, secret, baseURL string) (string, error) {
	s, err := corekit.ScopeOf(scopeIdentity(apiKey, secret), baseURL)
	if err != nil {
		return "", fmt.Errorf("%w: %w", payonce.ErrInvalidConfig, err)
	}
	return s, nil
}

// scopeIdentity is the credential part of Scope.
func scopeIdentity(apiKey, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("payonce journal scope\x00"))
	m.Write([]byte(apiKey))
	return ProviderName + ":" + hex.EncodeToString(m.Sum(nil)[:16])
}

// legacyScopes are the scopes earlier payonce versions recorded this API
// key's entries under: a plain SHA-256 prefix of the key, and before that
// the key itself. They are only looked up, never stored again.
func legacyScopes(apiKey string) []string {
	sum := sha256.Sum256([]byte(apiKey))
	return []string{ProviderName + ":" + hex.EncodeToString(sum[:8]), ProviderName + ":" + apiKey}
}
