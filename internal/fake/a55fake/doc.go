// Package a55fake is the A55 wallet/charge API served by the fakeserver
// engine, as A55's API reference documents it: OAuth2 client
// credentials, the per-client rate limit, wallets, charges by card
// (the sandbox's test cards, pre-authorisation and capture, 3DS), PIX
// and boleto, refunds, cancels and chargebacks, with the signed webhook
// of every change, and the codes and late statuses of A55's pages on
// demand (answers.go). It validates every request body by the reference's
// rules in its own words (wire.go) and shares no code with the client it
// verifies. a55/a55test and cmd/fakepay serve it.
//
// Who uses it: a55/a55test, cmd/fakepay and the verification harness. It is
// part of the fakes: it ships in no merchant's production binary, only in
// test binaries and fake servers.
package a55fake
