// Package fakeserver is the one server-side engine behind the payonce
// fakes (a55/a55test, coinepay/coinepaytest and cmd/fakepay): the
// injectable clock, the idempotency store, fault injection, the ledger of
// executed operations, the attempt log, the per-key operations index, the
// admin API with its access rules and the web console. A provider plugs
// in through Backend and ProviderConfig; the engine runs the request
// pipeline (faults, body limit, routing, authentication, key rules,
// idempotency, commit, answer) the same way for both.
//
// The engine and the provider fakes import nothing of the SDK they check
// (TestFakesImportNothingOfTheSDK): their money type (Decimal), their
// masking of card data and secrets (MaskText, MaskJSON) and their wire
// names are their own, so that a mistake in the SDK is caught by the fake
// instead of shared with it.
//
// Who uses it: the provider fakes beside it (internal/fake/a55fake,
// internal/fake/coinepayfake), the test servers a55test, coinepaytest and
// payoncetest, cmd/fakepay and the verification harness. It is part of the
// fakes: it ships in no merchant's production binary, only in test binaries
// and fake servers.
package fakeserver
