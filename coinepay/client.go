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
//	res, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
//	switch {
//	case errors.Is(err, payonce.ErrInsufficientBalance):
//		// top up, then run the same operation again with payonce.ResumeContext(ctx, err)
//	case errors.Is(err, payonce.ErrIdempotencyConflict):
//		// the key was used for another body: a bug in the caller
//	case err != nil:
//		// store payonce.ResumeTokenOf(err); resume with payonce.WithResumeToken
//	}
//	fmt.Println(res.CardID, res.Meta.Replayed, res.Meta.Attempts)
//
// There is no public Coinepay base URL: pass payonce.WithBaseURL.
package coinepay

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/payonce/payonce"
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
	signer *payonce.HMACSigner

	// Cards issues, funds and reads cards.
	Cards *CardsService
}

// NewClient returns a client for the API key apiKey (sent as X-Api-Key)
// and its secret (the HMAC key; it never leaves the process). The
// Coinepay defaults come first: Coinepay's key rules, the envelope codec
// and an HMAC-SHA256 signer under the project's scheme that reads the
// client's clock (payonce.WithClock, default time.Now). The caller's
// options follow and win: payonce.WithBaseURL is required,
// payonce.WithSigner replaces the default signer for a deployment whose
// scheme differs, payonce.WithRetryPolicy, payonce.WithLogger and
// payonce.WithHTTPClient tune the rest. Errors wrap
// payonce.ErrInvalidConfig and never contain the secret.
func NewClient(apiKey, secret string, opts ...payonce.Option) (*Client, error) {
	// The default signer reads the client's clock (payonce.WithClock), so
	// that one clock dates both the key-age guard and the signatures.
	var core *payonce.Client
	signer, err := payonce.NewHMACSigner(apiKey, secret, payonce.WithSignerClock(func() time.Time { return core.Now() }))
	if err != nil {
		return nil, fmt.Errorf("coinepay: %w", err)
	}
	base := []payonce.Option{
		payonce.WithKeyRules(payonce.CoinepayKeyRules()),
		payonce.WithProvider(ProviderName),
		payonce.WithScope(Scope(apiKey)), // journal scope: a digest of the API key, never the key or the secret
		payonce.WithCodec(Codec{}),
		payonce.WithSigner(signer),
	}
	core, err = payonce.NewClient(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("coinepay: %w", err)
	}
	c := &Client{core: core, signer: signer}
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

// Scope is the journal scope a client with this API key records its
// operations under: "coinepay:" and the first 16 hex digits of the key's
// SHA-256, so that journal rows identify the credential without holding it.
func Scope(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return ProviderName + ":" + hex.EncodeToString(sum[:8])
}
