// Package coinepayfake is the Coinepay card OpenAPI served by the
// fakeserver engine: HMAC request signatures (its own verifier on the fake
// clock), a USD balance per API key, card apply/recharge/info/list.
// coinepay/coinepaytest and cmd/fakepay serve it.
//
// Who uses it: coinepay/coinepaytest, cmd/fakepay and the verification
// harness. It is part of the fakes: it ships in no merchant's production
// binary, only in test binaries and fake servers.
package coinepayfake
