// Package admintest reads, in tests, the state a fake server (a55test,
// coinepaytest, cmd/fakepay) reports on its admin API, so a test can wait
// for a fault to hold a request instead of sleeping and hoping it does.
//
// Who uses it: the tests of payoncetest, coinepaytest and cmd/fakepay;
// nothing else. It ships in no merchant's binary.
package admintest
