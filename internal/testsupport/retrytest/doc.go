// Package retrytest records, in tests, the wait a payonce client chose
// before each retry, as its observer sees it, so a test can assert on that
// decision instead of timing it or reading the client's log.
//
// Who uses it: the tests of coinepay and payoncetest; nothing else. It
// ships in no merchant's binary.
package retrytest
