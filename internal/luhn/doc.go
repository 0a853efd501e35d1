// Package luhn holds the Luhn checksum that card validation and redaction share.
//
// Who uses it: the root package payonce, the a55 client and package redact.
// It ships in every merchant's binary.
package luhn
