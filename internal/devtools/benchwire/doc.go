// Package benchwire holds what the benchmarks of the typed clients send
// and answer, so that every benchmark of one operation (the package's
// own, the peer benchmark under bench/) uses the same bytes: the answers
// an httptest server gives, and the plain structs a bare net/http client
// decodes them into.
//
// Who uses it: the benchmarks of a55 and coinepay, and the peer benchmark
// module under bench/. It is a developer tool and ships in no merchant's
// binary.
package benchwire
