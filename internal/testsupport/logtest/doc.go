// Package logtest gives slog handler options for tests that search log
// output for a secret. A record's time is left out: its nanoseconds are
// random digits, and a short secret such as a CVV turns up in them now and
// then, failing a test that is right.
//
// Who uses it: the tests of the root package, redact and redactprint;
// nothing else. It ships in no merchant's binary.
package logtest
