package corekit

import "time"

// Retry is what a codec says of retrying one error answer (Advice).
type Retry uint8

const (
	// RetryByStatus leaves it to the core's status table: 429, 500, 502,
	// 503 and 504 are retried under the same key, every other status is
	// final for the attempt loop.
	RetryByStatus Retry = iota
	// RetrySameKey: another attempt with the same key and body may
	// succeed, whatever the status (a provider's code that asks for a
	// retry under the key, on a 4xx as on a 5xx).
	RetrySameKey
	// RetryNever: no attempt follows under the key, whatever the status
	// (a 5xx included): the answer leaves the outcome unknown, and the
	// operation is looked up before anything is sent again.
	RetryNever
)

// Advice is a codec's word on one error answer (status 400 and above),
// beyond its kind: a codec with a method Advise(e *payonce.APIError)
// corekit.Advice is asked after each such answer, once DecodeError has
// read it. The zero Advice is the core's status table.
type Advice struct {
	Retry Retry
	// NotBefore, with RetrySameKey, is the least wait before the next
	// attempt, never shortened (a server's Retry-After is capped by the
	// policy's MaxRetryAfter; this is not). When the retry policy cannot
	// wait that long (MaxRetryAfter, MaxElapsedTime) nor the context (its
	// deadline), the call ends at once, resumable with its key
	// (ErrRetriesExhausted); a wait the key's window cannot afford ends it
	// as any retry's does (ErrKeyExpired).
	NotBefore time.Duration
}
