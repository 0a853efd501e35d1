package payonce

// The journal API follows issue 10 with these additions (no removals):
// ErrJournal (a journal failure; nothing sent when Reserve fails),
// *JournalWriteError (the outcome could not be recorded), ErrJournalNotFound,
// ErrJournalSettled, ErrJournalRecorded (the Err of an error rebuilt from a
// failed entry), Fingerprint, MaxReferenceLen, JournalEntry.Settled,
// Client.Scope, Client.Journal and RedactJSON. ReserveTx accepts an entry
// without a Fingerprint (no body check for it), and pgjournal.New takes a
// context first because it migrates the schema.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
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

// MaxReferenceLen is the longest reference WithReference accepts, in bytes.
const MaxReferenceLen = 255

// JournalEntry is one business operation's durable record. Scope and
// Reference identify it; Key, KeyCreated and Fingerprint are fixed when it
// is reserved; the other fields change as the operation settles.
type JournalEntry struct {
	Scope        string       // provider and credential identity, e.g. "a55:client-1"; never a secret
	Reference    string       // the merchant's name of the operation, e.g. "order-42/charge"
	Operation    string       // e.g. "charges.create"
	Method       string       // HTTP method
	Path         string       // request path, redacted, never the query string
	Key          string       // the Idempotency-Key every attempt sends
	KeyCreated   time.Time    // when the key was first used
	Fingerprint  string       // hex SHA-256 of method, path and the body bytes
	State        JournalState // pending, succeeded or failed
	Result       []byte       // the answer body, redacted JSON, for succeeded (and failed, to rebuild its error)
	StatusCode   int          // final HTTP status, when there was one
	RequestID    string       // provider request ID
	Replayed     bool         // the final answer was a server replay
	ErrorKind    string       // KindName of the error's kind, for failed (and the last pending failure)
	ErrorCode    string       // provider error code
	ErrorMessage string       // provider error message, redacted
	Attempts     int          // attempts sent over all runs
	LastCause    string       // why the last run ended without settling, for pending
	CreatedAt    time.Time    // when the entry was reserved
	UpdatedAt    time.Time    // last change
	LeaseOwner   string       // worker holding the entry's lease ("" when none)
	LeaseUntil   time.Time    // end of the lease
}

// Settled reports whether the entry is succeeded or failed.
func (e JournalEntry) Settled() bool { return e.State == JournalSucceeded || e.State == JournalFailed }

// PendingQuery selects pending entries. Zero fields select everything.
type PendingQuery struct {
	Scope  string    // only this scope, "" for all
	Before time.Time // only entries last updated before this, zero for all
	Limit  int       // at most this many, 0 for no limit
}

// ClaimRequest asks for pending entries leased to Owner for Lease: only
// entries whose lease is free or expired are claimed.
type ClaimRequest struct {
	Scope string        // only this scope, "" for all
	Owner string        // the claiming worker, non-empty
	Lease time.Duration // lease length, > 0
	Limit int           // at most this many, 0 for no limit
}

// Journal stores journal entries durably. Implementations: journal.NewMemory
// (tests), sqlitejournal (embedded, several processes on one file) and
// pgjournal (a fleet sharing one PostgreSQL database). All are safe for
// concurrent use.
type Journal interface {
	// Reserve inserts e as pending unless (Scope, Reference) exists; it
	// returns the stored entry and whether it was created.
	Reserve(ctx context.Context, e JournalEntry) (JournalEntry, bool, error)
	// Update overwrites the mutable fields (State, Result, StatusCode,
	// RequestID, Replayed, Error*, Attempts, LastCause, UpdatedAt) of
	// (Scope, Reference); it never moves a settled entry back to pending
	// (ErrJournalSettled, wrapped) and returns ErrJournalNotFound (wrapped)
	// for an absent entry.
	Update(ctx context.Context, e JournalEntry) error
	// Get returns the entry of (scope, reference), or ErrJournalNotFound
	// (wrapped) when absent.
	Get(ctx context.Context, scope, reference string) (JournalEntry, error)
	// Pending lists pending entries, oldest first.
	Pending(ctx context.Context, q PendingQuery) ([]JournalEntry, error)
	// Claim leases pending entries whose lease is free or expired to
	// c.Owner until now+c.Lease and returns them, oldest first.
	Claim(ctx context.Context, c ClaimRequest) ([]JournalEntry, error)
	// Purge deletes settled entries last updated before settledBefore and
	// returns how many it deleted. Pending entries are never purged.
	Purge(ctx context.Context, settledBefore time.Time) (int64, error)
}

// Journal errors returned by Journal implementations (wrapped).
var (
	// ErrJournalNotFound: no entry has this scope and reference.
	ErrJournalNotFound = errors.New("journal entry not found")
	// ErrJournalSettled: an Update tried to move a settled entry back to
	// pending or to another outcome.
	ErrJournalSettled = errors.New("journal entry already settled")
)

// OutcomeUnknownError is the Err of an *APIError whose Kind is
// ErrOutcomeUnknown: the journal holds a pending entry whose key is too old
// to send again, so nothing was sent. Reconcile it with the provider (look
// the resource up), never execute it a second time.
type OutcomeUnknownError struct {
	Entry JournalEntry
}

// Error names the reference and when its key was created, never a body;
// the *APIError that carries it names the key.
func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("reference %q pending since %s, its key too old to send again",
		e.Entry.Reference, e.Entry.KeyCreated.UTC().Format(time.RFC3339))
}

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
	return "operation ran and " + o + "; the journal could not record it (outcome recorded only in this error): " + RedactString(e.Err.Error())
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
	var ou *OutcomeUnknownError
	if errors.As(err, &ou) {
		return ou.Entry, true
	}
	return JournalEntry{}, false
}

// WithJournal records every operation called with WithReference in j, so
// that it runs once across processes and restarts (see docs/crash-safety.md).
func WithJournal(j Journal) Option {
	return func(c *Client) error {
		if isNil(j) {
			return fmt.Errorf("%w: nil journal", ErrInvalidConfig)
		}
		c.journal = j
		return nil
	}
}

// WithScope names the provider and credential identity journal entries are
// recorded under (typed clients set "a55:<client_id>" and coinepay.Scope
// of the API key, a digest). It must never hold a secret.
func WithScope(s string) Option {
	return func(c *Client) error {
		if len(s) > MaxReferenceLen || !printable(s) {
			return fmt.Errorf("%w: scope must be printable UTF-8 and at most %d bytes", ErrInvalidConfig, MaxReferenceLen)
		}
		c.scope = s
		return nil
	}
}

// WithReference names the business operation (an order and its step, a job
// ID) in the client's journal: a second call with the same reference, in
// any process, returns the recorded outcome or resumes the same operation
// with its key instead of running it again. It must be non-empty,
// printable and at most MaxReferenceLen bytes; the client needs WithJournal.
func WithReference(ref string) CallOption {
	return func(o *callOptions) { o.reference, o.hasReference = ref, true }
}

// Scope returns the scope journal entries are recorded under.
func (c *Client) Scope() string { return c.scope }

// Journal returns the client's journal (nil when none).
func (c *Client) Journal() Journal { return c.journal }

// printable reports whether s is valid UTF-8 without control characters:
// every backend can store it (PostgreSQL's text refuses invalid UTF-8).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

// checkReference validates the reference of one call, before anything is
// sent or recorded.
func (c *Client) checkReference(req *Request, o callOptions) error {
	if !o.hasReference {
		return nil
	}
	switch {
	case c.journal == nil:
		return fmt.Errorf("%w: WithReference needs a client with WithJournal", ErrInvalidConfig)
	case o.reference == "":
		return invalid(ErrInvalidRequest, "reference", "empty")
	case len(o.reference) > MaxReferenceLen:
		return invalid(ErrInvalidRequest, "reference", fmt.Sprintf("longer than %d bytes", MaxReferenceLen))
	case !printable(o.reference):
		return invalid(ErrInvalidRequest, "reference", "holds a control character or is not UTF-8")
	case !req.Keyed || o.noKey:
		return invalid(ErrInvalidRequest, "reference", "only an operation with an idempotency key can be journaled")
	}
	return nil
}

// Fingerprint is the hex SHA-256 of method, path and body bytes: a second
// call with the same reference must send the same request.
func Fingerprint(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(strings.ToUpper(method)))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// journaled runs op under the journal: reserve (or consult) the entry
// before the first byte is sent, run the attempts, record the outcome.
func (op *operation) journaled(ref string, out any, start time.Time) (Meta, error) {
	c := op.c
	now := c.now()
	e := JournalEntry{
		Scope: c.scope, Reference: ref,
		Operation: op.req.Operation, Method: op.req.Method, Path: c.redactor().redactStored(op.req.Path),
		Key: op.key, KeyCreated: op.created,
		Fingerprint: Fingerprint(op.req.Method, op.req.Path, op.body),
		State:       JournalPending, CreatedAt: now, UpdatedAt: now,
	}
	stored, created, err := c.journal.Reserve(op.ctx, e)
	if err != nil {
		kind := ErrJournal
		if cerr := op.ctx.Err(); cerr != nil {
			kind = cerr
		}
		return op.journalMeta(start, ref), op.fail(kind, fmt.Errorf("reserve: %w", err))
	}
	if !created {
		op.key, op.created = stored.Key, stored.KeyCreated
		if err := c.rules.Validate(stored.Key); err != nil {
			return op.journalMeta(start, ref), op.fail(keyKind(err), err)
		}
		if !sameRequest(stored, e) {
			return op.journalMeta(start, ref), op.fail(ErrIdempotencyConflict,
				fmt.Errorf("reference %q was recorded with another request", ref))
		}
		switch stored.State {
		case JournalSucceeded:
			return op.fromJournal(stored, out, start)
		case JournalFailed:
			return op.journalMeta(start, ref), op.storedError(stored, out)
		}
		if !op.keyFresh(now) {
			return op.journalMeta(start, ref), op.fail(ErrOutcomeUnknown, &OutcomeUnknownError{Entry: stored})
		}
	}
	meta, runErr := op.execute(out, start)
	meta.Reference = ref
	up := stored
	up.Attempts += op.attempts
	up.UpdatedAt = c.now()
	up.StatusCode, up.RequestID, up.Replayed = meta.StatusCode, meta.RequestID, meta.Replayed
	var apiErr *APIError
	switch {
	case runErr == nil:
		up.State = JournalSucceeded
		up.Result = c.redactor().redactJSON(op.respBody)
		up.ErrorKind, up.ErrorCode, up.ErrorMessage, up.LastCause = "", "", "", ""
	case errors.As(runErr, &apiErr):
		kind := apiErr.Kind
		if kind == nil {
			kind = KindForStatus(apiErr.StatusCode)
		}
		up.ErrorKind, up.ErrorCode, up.ErrorMessage = KindName(kind), c.redactor().redactStored(apiErr.Code), c.redactor().redactStored(apiErr.Message)
		if apiErr.StatusCode != 0 {
			up.StatusCode = apiErr.StatusCode
		}
		if resumable(apiErr) {
			up.State = JournalPending
			up.LastCause = c.redactor().redactStored(kind.Error())
			if op.lastCause != "" {
				up.LastCause += " (" + op.lastCause + ")"
			}
		} else {
			up.State = JournalFailed
			up.Result = c.redactor().redactJSON(op.respBody) // the codec rebuilds the same error from it
			up.LastCause = ""
		}
	default:
		up.State = JournalPending
		up.LastCause = "unknown error"
	}
	// The outcome is recorded even when the caller's context ended with
	// the operation: an unrecorded success would stay pending.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(op.ctx), journalWriteTimeout)
	defer cancel()
	if err := c.journal.Update(uctx, up); err != nil {
		if errors.Is(err, ErrJournalSettled) {
			// A concurrent run with the same key settled the entry first:
			// its recorded outcome is the operation's outcome.
			if got, gerr := c.journal.Get(uctx, stored.Scope, stored.Reference); gerr == nil && got.Settled() {
				if got.State == JournalSucceeded {
					return op.fromJournal(got, out, start)
				}
				return op.journalMeta(start, ref), op.storedError(got, out)
			}
		}
		e := op.fail(ErrJournal, &JournalWriteError{Outcome: runErr, Err: err})
		if apiErr != nil {
			e.StatusCode, e.Code, e.Message, e.RequestID, e.Replayed = apiErr.StatusCode, apiErr.Code, apiErr.Message, apiErr.RequestID, apiErr.Replayed
		}
		return meta, e
	}
	return meta, runErr
}

// sameRequest reports whether a stored entry was recorded for the request
// e describes: the same fingerprint or, for an entry reserved without one
// (ReserveTx), the same method and path, so that a reference never runs
// another operation under its key.
func sameRequest(stored, e JournalEntry) bool {
	if stored.Fingerprint != "" {
		return stored.Fingerprint == e.Fingerprint
	}
	return (stored.Method == "" || strings.EqualFold(stored.Method, e.Method)) && (stored.Path == "" || redactStored(stored.Path) == e.Path)
}

// resumable reports whether a failed operation stays pending: a same-key
// run may still succeed (a temporary failure, an insufficient balance, a
// rate limit, refused credentials or signature that a fix of configuration
// cures), or the outcome is unknown (the key aged out after an attempt, an
// answer that could not be decoded, a key conflict: the journal proved the
// body is the one recorded with the key, so a conflict means another run
// of the same operation is in flight). Everything else is final.
func resumable(e *APIError) bool {
	if e.Temporary() {
		return true
	}
	for _, k := range []error{ErrInsufficientBalance, ErrRateLimited, ErrKeyExpired, ErrMalformedResponse, ErrIdempotencyConflict,
		ErrUnauthorized, ErrSignatureInvalid, ErrTimestampExpired, ErrNonceReplayed, ErrInvalidConfig} {
		if errors.Is(e.Kind, k) {
			return true
		}
	}
	return false
}

// journalMeta is the Meta of a journaled call that sent nothing (yet).
func (op *operation) journalMeta(start time.Time, ref string) Meta {
	m := op.meta(nil, start)
	m.Reference = ref
	return m
}

// fromJournal answers a succeeded entry from the journal: nothing is sent.
func (op *operation) fromJournal(e JournalEntry, out any, start time.Time) (Meta, error) {
	m := op.journalMeta(start, e.Reference)
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
// declined, for a55.ChargeFromError) is there too.
func (op *operation) storedError(e JournalEntry, out any) *APIError {
	kind := KindByName(e.ErrorKind)
	if kind == nil {
		kind = ErrServer
	}
	ae := &APIError{Kind: kind, Code: e.ErrorCode, Message: e.ErrorMessage, Err: ErrJournalRecorded}
	if inner := op.decodedError(e, out); inner != nil {
		ae.Err = &recordedError{err: inner}
	}
	op.fill(ae, nil)
	ae.StatusCode, ae.RequestID, ae.Replayed = e.StatusCode, e.RequestID, e.Replayed
	return ae
}

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
// ErrJournalRecorded and what the codec attached.
type recordedError struct{ err error }

func (e *recordedError) Error() string   { return ErrJournalRecorded.Error() }
func (e *recordedError) Unwrap() []error { return []error{ErrJournalRecorded, e.err} }

// ErrJournalRecorded is the Err of an *APIError rebuilt from a failed
// journal entry: the failure was recorded earlier and nothing was sent.
var ErrJournalRecorded = errors.New("recorded in the journal")
