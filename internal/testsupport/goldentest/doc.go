// Package goldentest opens the golden journals of testdata/journals,
// written by earlier payonce versions, with today's code, and plants in
// today's fakes what the providers did when each was written, for the
// tests that check an upgrade keeps every entry's meaning. Tests only.
//
// Who uses it: the tests of journal and cmd/payonce; nothing else. It ships
// in no merchant's binary.
package goldentest
