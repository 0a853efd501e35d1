// Package redactprint prints the SDK's result types (an A55 charge, a
// Coinepay card) with every text a server sent passed through
// redact.String, under every fmt verb and in slog records, while
// the values themselves keep what the server sent for code that reads
// them on purpose.
//
// Who uses it: the a55 and coinepay clients' result types. It ships in a
// merchant's binary with either client.
package redactprint
