package corekit

import "time"

// HeaderReplay marks an answer that is a copy of a stored response
// (Coinepay sends "X-Idempotent-Replay: true").
const HeaderReplay = "X-Idempotent-Replay"

// MaxReferenceLen is the longest reference WithReference accepts, in bytes;
// a scope is held to it too.
const MaxReferenceLen = 255

// MaxSettleReason is the longest Settlement.Reason, in bytes.
const MaxSettleReason = 1024

// MaxSummaryLen is the longest request summary a journal entry holds
// (JournalEntry.Summary), in bytes of JSON.
const MaxSummaryLen = 4096

// JournalReserveLease is how long Reserve leases an entry it creates to
// the entry's LeaseOwner, on the journal's clock, when the entry gives no
// Lease; Settle's lease too.
const JournalReserveLease = time.Minute

// KeyClockTolerance is how far in the future a key creation time may lie
// (a clock a little ahead) and still be taken, as the present. Beyond it
// the key's age is unknown and the operation is refused with
// ErrKeyCreatedInFuture, nothing sent.
const KeyClockTolerance = time.Minute

// DefaultLookupMargin widens a settle lookup window on both sides: it
// covers the difference between the provider's clock and the journal's,
// and how long an attempt may travel and run after its start was
// recorded.
const DefaultLookupMargin = 15 * time.Minute

// MaxRoutes is how many distinct routes one Client reports for paths it
// derives a route from (Request.Route empty), and again for the routes
// callers give: past it, or for a route longer than the client's route
// length bound, an operation's route is RouteOverflow. Paths built from
// words a caller does not control (a forwarded path, a lowercase slug used
// as an ID) thus cannot grow an observer's memory or a metric's
// cardinality.
const MaxRoutes = 256

// RouteOverflow is the route of an operation whose own route did not fit
// the client's route table (see MaxRoutes). It never starts with '/', so
// it is never mistaken for a path of the API.
const RouteOverflow = "other"

// CauseSignerRecovery is the Cause of an attempt repeated once because the
// signer recovered from the last answer (a refreshed token after a 401, a
// corrected clock after openapi_timestamp_expired).
const CauseSignerRecovery = "signer_recovery"
