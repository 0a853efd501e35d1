package payonce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// JournalState is the state of a journal entry.
type JournalState string

// The three states of a journal entry. Only pending entries are resumed; a
// settled entry (succeeded or failed) never moves back to pending.
const (
	// JournalPending: reserved, the outcome is not known yet (nothing sent,
	// in flight, or a failure a same-key retry may still turn into success).
	JournalPending JournalState = "pending"
	// JournalSucceeded: a 2xx answer was decoded; Result holds it (redacted).
	JournalSucceeded JournalState = "succeeded"
	// JournalFailed: a final failure (a 4xx, a declined card); ErrorKind,
	// ErrorCode and ErrorMessage hold it.
	JournalFailed JournalState = "failed"
)

// journalWriteTimeout bounds recording an outcome after the caller's
// context ended.
const journalWriteTimeout = 10 * time.Second

// IdempotencyKey is the entry's key with its creation time (the zero Key
// for an entry without one).
func (e JournalEntry) IdempotencyKey() Key {
	if e.Key == "" {
		return Key{}
	}
	return Key{id: e.Key, created: keyTime(e.KeyCreated)}
}

// JournalEntry is one business operation's durable record. Scope and
// Reference identify it; Key, KeyCreated and Fingerprint are fixed when it
// is reserved; the other fields change as the operation settles.
type JournalEntry struct {
	Scope       string    // provider and credential identity, e.g. "a55:client-1"; never a secret
	Reference   string    // the merchant's name of the operation, e.g. "order-42/charge"
	Operation   string    // e.g. "charges.create"
	Method      string    // HTTP method
	Path        string    // request path, redacted, never the query string
	Key         string    // the Idempotency-Key every attempt sends
	KeyCreated  time.Time // when the key was first used
	Fingerprint string    // keyed digest of method, path and body, or one without card data (fingerprint.go)
	// Summary is what a settle lookup matches the provider's records
	// against, fixed at Reserve: the provider's redacted JSON summary of
	// the request (Request.Summary; an A55 charge: amount, currency,
	// type, wallet, description), never card data nor a hash of it. ""
	// when the request gave none.
	Summary      string
	State        JournalState // pending, succeeded or failed
	Result       []byte       // the answer body, redacted JSON, for succeeded (and failed, to rebuild its error)
	StatusCode   int          // final HTTP status, when there was one
	RequestID    string       // provider request ID
	Replayed     bool         // the final answer was a server replay
	ErrorKind    string       // stable name of the error's kind ("card_declined"), for failed (and the last pending failure)
	ErrorCode    string       // provider error code
	ErrorMessage string       // provider error message, redacted
	Attempts     int          // attempts sent over all runs
	LastCause    string       // why the last run ended without settling, for pending
	CreatedAt    time.Time    // when the entry was reserved
	UpdatedAt    time.Time    // last change
	LeaseOwner   string       // worker or run holding the entry's lease ("" when none)
	LeaseUntil   time.Time    // end of the lease, on the journal's clock
	// Fence grows by one with every run or claim that takes the entry
	// (Reserve creates it at 1). Every write but a success carries the
	// writer's fence and is refused (ErrJournalFenced) once it is stale.
	Fence int64
	// Sent is set, durably and before the first byte, by every attempt's
	// BeginAttempt: false means no attempt was ever sent under the entry,
	// true that one may have been (the outcome is in doubt until settled).
	// A run that ends before any byte left clears it (JournalUnsender).
	Sent bool
	// SettleReason says why the entry was settled from outside a run
	// (Client.Settle), or why the run recorded it as not executed.
	SettleReason string
	// ResourceID is the provider's ID of what the operation made (an A55
	// charge, a Coinepay card), named by the answer Result holds: set by
	// the client when it records a success, a failed operation that made
	// one (a declined charge) or a settlement; JournalFinder.Holders finds
	// the entry by it. "" when unknown: nothing made, an answer naming
	// none, or an entry written before the journal kept it.
	ResourceID string
	// Lease is given to Reserve, Take and BeginAttempt, never stored: how
	// long the entry is leased to LeaseOwner (for Reserve, a minute when 0).
	Lease time.Duration
}

// Settled reports whether the entry is succeeded or failed.
func (e JournalEntry) Settled() bool { return e.State == JournalSucceeded || e.State == JournalFailed }

// LookUpFirst reports a pending entry whose last answer left the outcome
// unknown (its ErrorKind is ErrOutcomeUnknown's: A55's TIMEOUT, say): no
// run sends anything under its key again. It is settled by looking the
// operation up at the provider (a typed client's lookup, Client.Settle);
// Result holds that answer, redacted, for the lookup to read.
func (e JournalEntry) LookUpFirst() bool {
	return e.State == JournalPending && e.ErrorKind == KindName(ErrOutcomeUnknown)
}

// NotExecuted reports whether the entry is settled as never executed by the
// provider (nothing moved: a new reference may run the operation).
func (e JournalEntry) NotExecuted() bool {
	return e.State == JournalFailed && e.ErrorKind == KindName(ErrNotExecuted)
}

// Journal stores journal entries durably: what Client.Do and Client.Settle
// need of one. The journal package's Store adds what a recovery worker
// needs (listing, claiming and purging entries). Implementations: journal.NewMemory
// (tests), sqlitejournal (embedded, several processes on one file) and
// pgjournal (a fleet sharing one PostgreSQL database). All are safe for
// concurrent use. Times a caller leaves zero (CreatedAt, UpdatedAt) and
// every lease time are the journal's clock: the database's now() on
// PostgreSQL, the machine's clock on SQLite and in memory.
type Journal interface {
	// Reserve inserts e as pending unless (Scope, Reference) exists; it
	// returns the stored entry and whether it was created. A created entry
	// has Fence 1, Sent and Attempts as e's (a run reserving right before
	// its first attempt marks it sent and counts it) and, when
	// e.LeaseOwner is set, is leased to it for e.Lease (a minute when
	// it is not above 0).
	Reserve(ctx context.Context, e JournalEntry) (JournalEntry, bool, error)
	// Update records an outcome: it overwrites State, Result, ResourceID,
	// StatusCode, RequestID, Replayed, Error*, LastCause, SettleReason and UpdatedAt
	// of (Scope, Reference), raises Attempts to e.Attempts (never lowers
	// it) and ends the lease. Precedence: a write of JournalSucceeded
	// lands on a pending or failed entry whatever e.Fence (it records what
	// the provider did); every other write needs a pending entry
	// (ErrJournalSettled, wrapped) and e.Fence equal to the stored fence
	// (ErrJournalFenced, wrapped). A succeeded entry never changes
	// (ErrJournalSettled). An absent entry is ErrJournalNotFound (wrapped).
	Update(ctx context.Context, e JournalEntry) error
	// Take gives the pending entry (r.Scope, r.Reference) to the run
	// r.LeaseOwner (non-empty): it raises the fence by one, leases the
	// entry to r.LeaseOwner until now + r.Lease (above 0), binds
	// r.Fingerprint to an entry reserved without one (ReserveTx; "" checks
	// nothing) and returns the entry; r's other fields are not read. A
	// live lease of another owner is ErrJournalLeased, a settled entry
	// ErrJournalSettled, another fingerprint than the stored one
	// ErrIdempotencyConflict, an absent one ErrJournalNotFound (all
	// wrapped); on ErrJournalLeased and ErrJournalSettled the stored
	// entry is returned too.
	Take(ctx context.Context, r JournalEntry) (JournalEntry, error)
	// BeginAttempt is the check before each attempt a run sends, in one
	// atomic write: the entry (r.Scope, r.Reference) must be pending (else
	// ErrJournalSettled, with the entry) and its fence r.Fence, the run's
	// from Reserve or Take (else ErrJournalFenced); it then sets Sent,
	// adds one to Attempts, renews the lease to r.LeaseOwner (non-empty)
	// until now + r.Lease (above 0), sets UpdatedAt to now and returns the
	// entry; r's other fields are not read.
	BeginAttempt(ctx context.Context, r JournalEntry) (JournalEntry, error)
	// Now returns the journal's clock (the database's now() on
	// PostgreSQL), or the zero time when the journal has none of its own
	// and measures with the machine's clock (SQLite, memory).
	Now(ctx context.Context) (time.Time, error)
	// Get returns the entry of (scope, reference), or ErrJournalNotFound
	// (wrapped) when absent.
	Get(ctx context.Context, scope, reference string) (JournalEntry, error)
}

// Journal errors returned by Journal implementations (wrapped).
var (
	// ErrJournalFenced: a write or an attempt carried a fence another run
	// or claim has since replaced: the entry was taken over. As an
	// APIError's Kind: the run stopped, nothing more was sent; call again
	// with the reference to get the outcome.
	ErrJournalFenced = newKind("journal_fenced", "journal entry taken over by another run")
	// ErrJournalLeased: another run holds a live lease on the entry. As an
	// APIError's Kind: nothing was sent; call again once it has finished.
	ErrJournalLeased = newKind("journal_leased", "journal entry leased to another run")
	// ErrJournalNotFound: no entry has this scope and reference (Get,
	// Update, Take). Not a kind: the client never ends an operation with
	// it.
	ErrJournalNotFound = errors.New("journal entry not found")
	// ErrJournalSettled: a write tried to move a settled entry back to
	// pending or to another outcome; a succeeded entry never changes. Not
	// a kind.
	ErrJournalSettled = errors.New("journal entry already settled")
)

// errJournalRecorded is the Err of an *APIError answered from the journal:
// the failure it records, not a new one.
var errJournalRecorded = errors.New("recorded in the journal")

// outcomeUnknownError is the Err of an *APIError whose Kind is
// ErrOutcomeUnknown: the journal holds a pending entry whose key is too old
// to send again, or whose last answer left the outcome unknown
// (JournalEntry.LookUpFirst), so nothing was sent. Reconcile it with the
// provider (look the resource up), never execute it a second time.
type outcomeUnknownError struct {
	Entry JournalEntry
	// LookUp: the entry's last answer left the outcome unknown; the key
	// may still be fresh, but nothing is sent under it before a lookup.
	LookUp bool
	// Cause is why the key cannot be sent again: ErrKeyExpired (past its
	// window) or ErrKeyCreatedInFuture (its age is unknown); nil when the
	// key may be sent again but an earlier run's attempt may still execute.
	Cause error
	// Refusal is, in that last case, what this run's attempt was answered
	// (a refusal final for a key no earlier attempt could still reach):
	// not the outcome, since that earlier attempt may still run.
	Refusal string
}

// Error names the reference and when its key was created, never a body;
// the *APIError that carries it names the key.
func (e *outcomeUnknownError) Error() string {
	why := "its key too old to send again"
	switch {
	case e.LookUp:
		code := ""
		if e.Entry.ErrorCode != "" {
			code = " (" + e.Entry.ErrorCode + ")"
		}
		why = "its last answer" + code + " left the outcome unknown: nothing is sent again under its key before the operation is looked up; " +
			"settle it by lookup (a typed client's settle lookup, or payonce journal settle -lookup) or with Client.Settle"
	case errors.Is(e.Cause, ErrKeyCreatedInFuture):
		why = "its key created in the future (age unknown), not sent again"
	case e.Cause == nil && e.Refusal != "":
		why = "an earlier run's attempt may still execute; this run was answered " + e.Refusal + ": call again with the reference, or settle it"
	}
	return fmt.Sprintf("reference %q pending since %s, an attempt may have been sent, %s",
		e.Entry.Reference, e.Entry.KeyCreated.UTC().Format(time.RFC3339), why)
}

// Unwrap returns the cause.
func (e *outcomeUnknownError) Unwrap() error { return e.Cause }

// JournalWriteError is the Err of an *APIError whose Kind is ErrJournal
// when the operation ran but the journal could not record its outcome:
// Outcome is the operation's own error (nil when it succeeded) and Err the
// journal's. The entry stays pending, so the next call with the reference
// resumes with the same key.
type JournalWriteError struct {
	Outcome error // the operation's error, nil on success
	Err     error // the journal's error
}

// Error says that the outcome is recorded only in this error.
func (e *JournalWriteError) Error() string {
	o := "succeeded"
	if ae, ok := e.Outcome.(*APIError); ok {
		// The APIError that carries this one names the operation and key.
		o = "failed: " + ae.summary()
	} else if e.Outcome != nil {
		o = "failed: " + e.Outcome.Error()
	}
	return "operation ran and " + o + "; the journal could not record it (outcome recorded only in this error): " + redact.String(e.Err.Error())
}

// Unwrap gives errors.Is both the operation's error and the journal's.
func (e *JournalWriteError) Unwrap() []error {
	if e.Outcome == nil {
		return []error{e.Err}
	}
	return []error{e.Outcome, e.Err}
}

// JournalEntryOf returns the journal entry carried by err (an
// ErrOutcomeUnknown error).
func JournalEntryOf(err error) (JournalEntry, bool) {
	var ou *outcomeUnknownError
	if errors.As(err, &ou) {
		return ou.Entry, true
	}
	var efe *EarlierFormError
	if errors.As(err, &efe) {
		return efe.Entry, true
	}
	return JournalEntry{}, false
}

// WithJournal records every operation called with WithReference in j, so
// that it runs once across processes and restarts (see docs/journal.md).
func WithJournal(j Journal) Option {
	return option(func(c *Client) error {
		if corekit.IsNil(j) {
			return fmt.Errorf("%w: nil journal", ErrInvalidConfig)
		}
		c.journal = j
		return nil
	})
}

// WithScope names the merchant account and environment journal entries
// are recorded under, replacing the scope a typed client derives from its
// credential and base URL (WithScopeIdentity, ScopeOf) whatever the
// options' order. It must be non-empty and never hold a secret. Two
// clients with one scope share entries: give each credential and each
// environment its own.
func WithScope(s string) Option {
	return option(func(c *Client) error {
		if s == "" || len(s) > corekit.MaxReferenceLen || !corekit.Printable(s) {
			return fmt.Errorf("%w: scope must be non-empty printable UTF-8 of at most %d bytes", ErrInvalidConfig, corekit.MaxReferenceLen)
		}
		c.scope, c.ident.explicit = s, true
		return nil
	})
}

// WithReference names the business operation (an order and its step, a job
// ID) in the client's journal: a second call with the same reference, in
// any process, returns the recorded outcome or resumes the same operation
// with its key instead of running it again. It must be non-empty,
// printable (no control or bidirectional formatting character, such as
// ESC or U+202E) and at most 255 bytes; the client needs WithJournal.
func WithReference(ref string) CallOption {
	return func(o *callOptions) { o.reference, o.hasReference = ref, true }
}

// Scope returns the scope journal entries are recorded under.
func (c *Client) Scope() string { return c.scope }

// checkReference validates the reference of one call, before anything is
// sent or recorded.
func (c *Client) checkReference(req *Request, o callOptions) error {
	if !o.hasReference {
		return nil
	}
	switch {
	case c.journal == nil:
		return fmt.Errorf("%w: WithReference needs a client with WithJournal", ErrInvalidConfig)
	case corekit.NameProblem(o.reference) != "":
		return invalid(ErrInvalidRequest, "reference", corekit.NameProblem(o.reference))
	case !req.Keyed || o.noKey:
		return invalid(ErrInvalidRequest, "reference", "only an operation with an idempotency key can be journaled")
	case len(o.leaseOwner) > corekit.MaxReferenceLen || !corekit.Printable(o.leaseOwner):
		return invalid(ErrInvalidRequest, "lease owner", fmt.Sprintf("must be printable UTF-8 of at most %d bytes", corekit.MaxReferenceLen))
	}
	return nil
}

// journalMeta is the Meta of a journaled call that sent nothing (yet).
func (op *operation) journalMeta(ref string) Meta {
	m := op.meta(nil)
	m.Reference = ref
	if op.jr != nil {
		m.LeaseOwner = op.jr.owner
	}
	return m
}

// fromJournal answers a succeeded entry from the journal: nothing is sent.
func (op *operation) fromJournal(e JournalEntry, out any) (Meta, error) {
	m := op.journalMeta(e.Reference)
	m.FromJournal, m.StatusCode, m.RequestID, m.Replayed = true, e.StatusCode, e.RequestID, e.Replayed
	if derr := op.c.codec.DecodeSuccess(e.StatusCode, nil, e.Result, out); derr != nil {
		var apiErr *APIError
		if errors.As(derr, &apiErr) {
			op.fill(apiErr, nil)
			return m, apiErr
		}
		return m, op.fail(ErrMalformedResponse, serverCause(fmt.Errorf("journal result: %w", derr)))
	}
	return m, nil
}

// storedError rebuilds the typed error of a failed entry: nothing is sent.
// When the entry holds the (redacted) answer, the client's codec decodes it
// again, so what the codec attached to the first error (an A55 charge
// declined, for a55.ChargeFromError) is there too. It is FromJournal.
func (op *operation) storedError(e JournalEntry, out any) *APIError {
	kind := op.c.kindByName(e.ErrorKind)
	if kind == nil {
		kind = ErrServer
	}
	ae := &APIError{Kind: kind, Code: e.ErrorCode, Message: e.ErrorMessage, Err: errJournalRecorded, FromJournal: true}
	if inner := op.decodedError(e, out); inner != nil {
		ae.Err = &recordedError{err: inner}
	}
	if e.SettleReason != "" {
		ae.Err = &settledError{reason: e.SettleReason, err: ae.Err}
	}
	op.fill(ae, nil)
	ae.StatusCode, ae.RequestID, ae.Replayed = e.StatusCode, e.RequestID, e.Replayed
	return ae
}

// settledError is the Err of an error rebuilt from an entry settled with a
// reason (Client.Settle, or a run that recorded it as not executed): its
// text gives the reason; it unwraps to what it wraps.
type settledError struct {
	reason string
	err    error
}

func (e *settledError) Error() string { return e.err.Error() + " (settled: " + e.reason + ")" }
func (e *settledError) Unwrap() error { return e.err }

// decodedError is the Err the codec gives the recorded answer of a failed
// entry, or nil.
func (op *operation) decodedError(e JournalEntry, out any) error {
	if len(e.Result) == 0 || e.StatusCode == 0 {
		return nil
	}
	var got *APIError
	if e.StatusCode >= 200 && e.StatusCode < 300 {
		if derr := op.c.codec.DecodeSuccess(e.StatusCode, nil, e.Result, out); !errors.As(derr, &got) {
			return nil
		}
	} else {
		got = &APIError{}
		op.c.codec.DecodeError(e.StatusCode, nil, e.Result, got)
	}
	return got.Err
}

// recordedError is the Err of an error rebuilt from a failed entry whose
// answer the codec decoded again: errors.Is and errors.As see both
// that it was recorded and what the codec attached.
type recordedError struct{ err error }

func (e *recordedError) Error() string   { return errJournalRecorded.Error() }
func (e *recordedError) Unwrap() []error { return []error{errJournalRecorded, e.err} }
