// Package loopback tells whether a host, a Host header or a listen
// address names this machine only: plain http goes only there unless a
// client opts in, and the fakes answer only there unless told otherwise.
//
// Who uses it: the root package payonce and the a55 client (plain http only
// to this machine), and cmd/fakepay. It ships in every merchant's binary.
package loopback
