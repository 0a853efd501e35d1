// Package pgnotice tells whoever runs the tests that the PostgreSQL tests
// of a package were skipped, and how to run them. go test shows nothing a
// passing package prints unless -v is given, so the line also goes to the
// terminal the tests run in, when there is one.
//
// Who uses it: the TestMain of the tests of journal and journal/pgjournal;
// nothing else. It ships in no merchant's binary.
package pgnotice
