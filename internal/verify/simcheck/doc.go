// Package simcheck is an exhaustive, deterministic check of the SDK's
// journaled runs: a stateless model checker in the manner of dBug, CHESS
// or Jepsen's Maelstrom, small enough to run inside go test.
//
// A Scenario puts two or three workers on one reference, or on two
// references whose requests look alike, one of them settled by lookup
// (A55's SettleCreate, reading the model's charge list, which carries no
// key, as A55's does). Each worker is a
// goroutine running the real payonce client (the typed a55 or coinepay
// client over the core's journaled run) against a real journal; the
// journal and the HTTP transport are wrapped so that every journal call
// and every attempt sent is a yield point, where the worker stops and the
// scheduler decides what happens next: which worker moves, what the
// provider answers the attempt (a 2xx, a 4xx it keeps or does not keep, a
// 5xx, an answer lost after the commit), whether the worker crashes there,
// whether the clock moves (a lease expiring, a day passing). Only one
// goroutine runs at a time, so a run is a pure function of its choices.
// Explore enumerates every sequence of choices by depth-first search with
// replay: each run replays a prefix, takes the first option at every new
// choice point and records how many options there were; the next run
// bumps the deepest choice that has an option left.
//
// The provider is a model written from the providers' documents, not the
// project's fakes: per credential and key it keeps only 2xx answers (and,
// for a "kept" 4xx, that answer) for 24 hours on the true clock; the same
// key and body replay the kept answer, another body is a conflict; after
// any other answer the same key executes again. On every path the checker
// asserts: at most one execution per reference and merchant (whatever
// the keys), nothing sent once the key is 24 hours past its first sight at
// the provider, no journal entry recorded differently from what the
// provider did (failed although it executed, succeeded although it did
// not or with another result), a caller whose attempt got the 2xx is told
// that success, every success a caller is told is in its merchant's
// ledger, and no non-success write carrying a stale fence (the entry's
// fence grew since the writer took it) lands in the journal.
//
// Who uses it: go test alone: its tests are the check, and nothing imports
// it. It is part of the verification harness and ships in no merchant's
// binary.
package simcheck
