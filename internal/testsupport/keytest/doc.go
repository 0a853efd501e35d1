// Package keytest builds payonce keys of a given value for tests: a key a
// test names by hand, or one whose value breaks a provider's rules (too
// short, too long, a space), which payonce.NewKey never builds. It goes
// through the key's text form, as a key read back from storage does.
//
// Who uses it: the tests of the root package, a55, coinepay and their test
// servers, the journals, otelpayonce, errortext and hostile; nothing else.
// It ships in no merchant's binary.
package keytest
