// Package payonce is the core of a Go SDK for the A55 wallet/charge API and
// Coinepay-style card OpenAPIs whose one promise is that a payment
// operation runs exactly once, however many times the network, a crash or
// a job queue makes you run it again.
//
// A merchant builds a typed client (a55.NewClient, coinepay.NewClient)
// with this package's options and calls it with this package's call
// options:
//
//	j, err := sqlitejournal.Open(ctx, "payonce.db")
//	client, err := a55.NewClient(auth, payonce.WithJournal(j), payonce.WithExplicitKeys())
//	ch, err := client.Charges.Create(ctx, req, payonce.WithReference("order-42/attempt-1"))
//	if payonce.IsResumable(err) { /* the same reference again, later, in any process */ }
//
// The Idempotency-Key is resolved once: the journal entry's
// (WithReference on a client WithJournal), else a Key given with WithKey
// (NewKey builds one from the operation's parts and creation time), else a
// fresh UUID v4 created now (refused under WithExplicitKeys). It is checked
// against the provider's KeyRules before any byte is sent. Every error is
// an *APIError that matches the Err* sentinels with errors.Is and carries
// the key and its age: WithKey(KeyOf(err)) resumes the same operation, in
// this process or, the Key stored by its text form (MarshalText,
// ParseKey), in any other. An operation in doubt is settled by lookup
// (a55.ChargesService.SettleCreate, coinepay.CardsService.SettleApply) or
// by hand (Client.Settle), never by sending it again.
//
// The pipeline of one operation (Client.Do, for an endpoint the typed
// clients do not cover) is:
//
//	key -> validate -> serialize -> retry loop { key-age guard -> pace -> sign -> send -> read } -> decode
//
// The body is marshalled once; every attempt sends the same bytes and the
// same key, while the Signer signs each attempt afresh. Only connection
// failures, timeouts and 429/500/502/503/504 are retried, Retry-After is
// honoured up to a cap, no attempt is sent once the key is older than the
// provider's 24 h window minus a safety margin, and a client-wide
// RetryBudget keeps an outage from multiplying the load.
//
// The fakes for merchants' integration tests are a55/a55test and
// coinepay/coinepaytest. The documentation pages are under docs/ in the
// repository: docs/keys.md, docs/errors.md, docs/journal.md.
package payonce
