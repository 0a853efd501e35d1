// Package hostile holds the cross-provider test of the SDK's redaction
// promise: whatever a hostile or broken server echoes in an error answer
// (card numbers grouped or not, CVVs, bearer tokens, client secrets, API
// keys, query strings), no error text, printed form of an error or result,
// or log line of the a55 and coinepay clients holds it. It has no code of
// its own; its test drives the real clients against httptest servers.
//
// Who uses it: go test alone: its tests are the check, and nothing imports
// it. It is part of the verification harness and ships in no merchant's
// binary.
package hostile
