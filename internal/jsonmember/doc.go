// Package jsonmember finds a member of a JSON object by name, as
// encoding/json matches it to a struct field, without decoding anything:
// a codec that decoded the object in one pass uses it to take a member's
// bytes as sent (a Raw field) or to learn that a member came twice.
//
// Who uses it: the coinepay client's codec. It ships in a merchant's binary
// with coinepay.
package jsonmember
