// Package benchpair times two operations side by side in one benchmark:
// each iteration runs one of each, alternating which goes first, so a
// drift of the machine's speed touches both alike.
//
// Who uses it: the benchmarks of the root package, a55 and coinepay, and
// the peer benchmark module under bench/. It is a developer tool and ships
// in no merchant's binary.
package benchpair
