// Package chaos runs the exactly-once proof behind cmd/chaos: thousands of
// business operations through the SDK, exactly as a merchant would call it,
// against fake servers that lose answers, fail, reset connections and rate
// limit; then it checks the fakes' ledgers against what the clients were
// told.
//
// Who uses it: cmd/chaos, and go test through its bounded twin. It is part
// of the verification harness and ships in no merchant's binary.
package chaos
