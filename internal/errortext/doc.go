// Package errortext holds the check every error text of the SDK passes:
// it says each thing once.
//
// Who uses it: the root package payonce, whose error texts it checks. It
// ships in every merchant's binary.
package errortext
