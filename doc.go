// Package payonce is the core of a Go SDK for the A55 wallet/charge API and
// Coinepay-style card OpenAPIs whose one promise is that a payment
// operation runs exactly once, however many times the network makes you
// retry it.
//
// The pipeline of one operation (Client.Do) is the one of aws-sdk-go-v2:
//
//	key -> validate -> serialize -> retry loop { key-age guard -> pace -> sign -> send -> read } -> decode
//
// The Idempotency-Key is resolved once (a Key given with WithKey, built by
// NewKey from the operation's parts and creation time, or a fresh UUID v4
// created now) and checked against
// the provider's KeyRules before any byte is sent. The body is marshalled
// once; every attempt sends the same bytes and the same key, while the
// Signer gives each attempt a fresh nonce, timestamp and signature.
// Attempts run on go-retryablehttp with a per-operation backoff/v4
// ExponentialBackOff; only connection failures, timeouts and 429/500/502/
// 503/504 are retried, Retry-After is honoured up to a cap, no attempt is
// sent once the key is older than the provider's 24 h window minus a safety
// margin, and a client-wide RetryBudget keeps an outage from multiplying the
// load.
//
// Every error is an *APIError that matches the Err* sentinels with
// errors.Is and carries the operation's key and its age:
// WithKey(KeyOf(err)) resumes the same operation, in this process or,
// the Key stored by its text form (MarshalText, ParseKey), in any other.
//
// The typed clients live in the a55 and coinepay packages; their fake
// servers, for merchants' integration tests, in a55/a55test and
// coinepay/coinepaytest.
//
// Source documents: the A55 idempotency guide (https://docs.a55.tech) and
// the Coinepay OpenAPI "Idempotency keys" page.
package payonce
