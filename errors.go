package payonce

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/errortext"
	"github.com/payonce/payonce/redact"
)

// Sentinel errors. Every error an operation returns is an *APIError whose
// Kind is one of these, so callers branch with errors.Is:
//
//	if errors.Is(err, payonce.ErrIdempotencyConflict) { ... }
//
// Key errors (ErrKeyRequired, ErrKeyInvalid) are raised by the client
// before any byte is sent, and also map the servers' key answers (A55's
// IDEMPOTENCY_KEY_* codes, Coinepay's openapi_idempotency_key_* message
// keys).
var (
	// ErrKeyRequired: the provider requires an Idempotency-Key and none was given.
	ErrKeyRequired = newKind("key_required", "idempotency key required")
	// ErrKeyInvalid: the key breaks the provider's rules: shorter than its
	// minimum (A55: 16), longer than its maximum (128) or holding a
	// character it refuses. The error's text says which.
	ErrKeyInvalid = newKind("key_invalid", "idempotency key invalid")
	// ErrKeyTooShort: the key is shorter than the provider's minimum. It
	// is an ErrKeyInvalid, with its own name in journals and metrics.
	ErrKeyTooShort = newSubKind("key_too_short", "idempotency key too short", ErrKeyInvalid)
	// ErrKeyTooLong: the key is longer than the provider's maximum. It is
	// an ErrKeyInvalid.
	ErrKeyTooLong = newSubKind("key_too_long", "idempotency key too long", ErrKeyInvalid)
	// ErrKeyInvalidChars: the key holds a character the provider refuses.
	// It is an ErrKeyInvalid.
	ErrKeyInvalidChars = newSubKind("key_invalid_chars", "idempotency key has invalid characters", ErrKeyInvalid)
	// ErrIdempotencyConflict: the key was already used with another payload
	// (HTTP 409). Retrying can never succeed: fix the body or use a new key.
	ErrIdempotencyConflict = newKind("idempotency_conflict", "idempotency key reused with a different payload")
	// ErrUnauthorized: missing, unknown or expired credentials (HTTP 401).
	ErrUnauthorized = newKind("unauthorized", "unauthorized")
	// ErrForbidden: the credentials may not do this (HTTP 403).
	ErrForbidden = newKind("forbidden", "forbidden")
	// ErrNotFound: the resource or path does not exist (HTTP 404).
	ErrNotFound = newKind("not_found", "not found")
	// ErrInvalidRequest: the server refused the request as malformed or
	// invalid (HTTP 400, 405, 413, 422 without a more specific code).
	ErrInvalidRequest = newKind("invalid_request", "invalid request")
	// ErrRateLimited: too many requests (HTTP 429). APIError.RetryAfter
	// holds the server's Retry-After.
	ErrRateLimited = newKind("rate_limited", "rate limited")
	// ErrServer: the server failed (HTTP 5xx).
	ErrServer = newKind("server", "server error")

	// ErrKeyExpired: the operation's key is older than the provider's
	// window minus the safety margin; another attempt could be executed
	// by the server as a new operation, so none is sent.
	ErrKeyExpired = newKind("key_expired", "idempotency key too old to retry safely")
	// ErrRetriesExhausted: every allowed attempt failed with a retryable
	// error, or the client-wide retry budget (WithRetryBudget) was spent
	// before the next one; the error's text says which.
	ErrRetriesExhausted = newKind("retries_exhausted", "retries exhausted")
	// ErrRetryBudgetExhausted: the client-wide retry budget
	// (WithRetryBudget) was spent before the next attempt. It is an
	// ErrRetriesExhausted, with its own name in journals and metrics.
	ErrRetryBudgetExhausted = newSubKind("retry_budget_exhausted", "retry budget exhausted", ErrRetriesExhausted)
	// ErrTransport: the request could not be sent or its answer not read.
	ErrTransport = newKind("transport", "transport error")
	// ErrMalformedResponse: the server's answer could not be decoded.
	ErrMalformedResponse = newKind("malformed_response", "malformed response")
	// ErrInvalidAmount: an amount is not a valid decimal string.
	ErrInvalidAmount = newKind("invalid_amount", "invalid amount")
	// ErrInvalidCard: a card fails the Luhn, expiry or CVV checks.
	ErrInvalidCard = newKind("invalid_card", "invalid card")
	// ErrInvalidConfig: a client option was refused.
	ErrInvalidConfig = newKind("invalid_config", "invalid configuration")
	// ErrOutcomeUnknown: the operation may have executed and its outcome
	// is not known: an answer said so (a provider's timeout code), or the
	// journal holds a pending entry whose key is too old to send again or
	// whose last answer said so (JournalEntry.LookUpFirst; JournalEntryOf
	// gives the entry). Nothing more is sent under the key: look the
	// operation up and settle it. Never final, never resumable.
	ErrOutcomeUnknown = newKind("outcome_unknown", "outcome unknown: reconciliation needed")
	// ErrJournal: the journal failed (see JournalWriteError for a failure
	// after the operation ran).
	ErrJournal = newKind("journal", "journal error")
	// ErrKeyCreatedInFuture: the key's creation time (a Key, a journal
	// entry) lies more than a minute ahead of the clock the age is measured on: its age is unknown, so
	// nothing is sent. Final for the key.
	ErrKeyCreatedInFuture = newKind("key_created_in_future", "idempotency key creation time is in the future")
	// ErrNotExecuted: the journal records that the provider never
	// executed the operation (nothing was sent under the key, or Settle
	// recorded it so): nothing moved, and a new reference may run it.
	ErrNotExecuted = newKind("not_executed", "operation not executed: nothing moved; a new reference may run it")
	// ErrSettledFailed: the operation was settled as failed from outside
	// a run (Client.Settle): the provider did not complete it.
	ErrSettledFailed = newKind("settled_failed", "operation settled as failed")
)

// Errors of a settle lookup (a55.ChargesService.SettleCreate,
// coinepay.CardsService.SettleApply): the provider's records did not tell
// what happened, so nothing was recorded and the entry stays pending.
// Both providers' lookups return them.
var (
	// ErrLookupAmbiguous: more than one operation at the provider could be
	// the entry's. The lookup never picks one: settle by hand
	// (Client.Settle) once you know which, if any, is yours.
	ErrLookupAmbiguous = newKind("lookup_ambiguous", "settle lookup ambiguous: the provider's records do not tell which operation is the entry's")
	// ErrLookupNotFound: no operation at the provider matches the entry,
	// and the lookup was not allowed to conclude that none ran (or its
	// window is not over yet).
	ErrLookupNotFound = newKind("lookup_not_found", "settle lookup found no matching operation")
)

// APIError is the one error type every payonce operation returns. It
// describes the failure (the server's answer, or the client-side reason when
// StatusCode is 0) and always carries the operation's idempotency key: store
// Key and resume the same operation later with WithKey (KeyOf).
//
// errors.Is(err, Kind) reports the kind; errors.Is and errors.As also reach
// Err, the underlying cause (a transport error, a *ValidationError, or the
// kind of the last answer when retries ran out).
type APIError struct {
	Provider   string // "a55", "coinepay" or "" for a generic client
	Operation  string // e.g. "charges.create"
	Method     string // HTTP method
	Path       string // request path, never the query string
	StatusCode int    // 0 when the error arose in the client
	Code       string // provider code: a Coinepay message_key or an A55 error code
	Message    string // provider message, UTF-8 as sent (may be Chinese), redacted
	RequestID  string // provider request ID when one was given
	Key        Key    // the operation's key and its creation time (the zero Key for GETs)
	Replayed   bool   // the answer was a replay of a stored response
	// FromJournal: nothing was sent; the failure is the one the journal
	// recorded for the reference (as Meta.FromJournal for a success).
	FromJournal bool
	Attempts    int           // attempts sent
	RetryAfter  time.Duration // the server's Retry-After, when it sent one
	Details     []ErrorDetail // field-level details, when the provider gave them
	Kind        error         // one of the Err* sentinels
	Err         error         // the underlying cause, if any

	noResume bool // set by the operation: no key and not idempotent, so never resumable
	// secrets returns the redactor of the client's own secrets, cut from
	// every text of the error. A func, as fmt prints one as an address
	// under every verb.
	secrets func() *redact.Redactor
}

// ErrorDetail is one field-level reason from a provider's error body.
type ErrorDetail struct {
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason,omitempty"`
	Code   string `json:"code,omitempty"`
}

// Error implements error. It names the operation, kind, status, code,
// message, details, cause, key and attempts, each once (see summary). The
// whole text but the idempotency key (the client's own, shown as it is
// when printable) passes through redact.String (its control characters
// turned into spaces, so it cannot forge a log line), so it never holds a
// secret, card number, CVV, token or query string, even when a server
// echoes one.
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("payonce: ")
	if e.Provider != "" {
		b.WriteString(e.Provider + " ")
	}
	if e.Operation != "" {
		b.WriteString(e.Operation + ": ")
	} else if e.Method != "" {
		b.WriteString(e.Method + " " + e.Path + ": ")
	}
	b.WriteString(e.summary())
	if e.Key.IsZero() {
		if e.Attempts > 0 {
			fmt.Fprintf(&b, " [%d attempt(s)]", e.Attempts)
		}
		return e.redactor().ServerText(b.String())
	}
	// The key is the client's own, never a server's text: it stays
	// readable whatever digits it holds (a date, an order number).
	s := e.redactor().ServerText(b.String()) + " [idempotency key " + printableKey(e.Key.String())
	if e.Attempts > 0 {
		s += fmt.Sprintf(", %d attempt(s)", e.Attempts)
	}
	return s + "]"
}

// maxDetailsInText is how many field-level details Error names; the rest
// are counted.
const maxDetailsInText = 3

// writeDetails appends the provider's field-level details ("type_charge:
// want one of ...") so the text says what to fix; a detail whose reason
// repeats what b or the cause that follows already say (A55 puts a
// charge's message in both) is left out.
func writeDetails(b *strings.Builder, details []ErrorDetail, cause string) {
	written := false
	for i, d := range details {
		if i == maxDetailsInText {
			fmt.Fprintf(b, " (and %d more)", len(details)-i)
			return
		}
		reason := d.Reason
		if reason == "" {
			reason = d.Code
		}
		if d.Field == "" && reason == "" {
			continue
		}
		if reason != "" && errortext.SharesPhrase(b.String()+" "+cause, reason) {
			continue
		}
		if written {
			b.WriteString("; ")
		} else {
			b.WriteString(": ")
		}
		written = true
		switch {
		case d.Field == "":
			b.WriteString(reason)
		case reason == "":
			b.WriteString(d.Field)
		default:
			b.WriteString(d.Field + ": " + reason)
		}
	}
}

// saysOnlyKind reports whether a server message only repeats the kind's
// text ("Invalid request.", "Not found"), which the error already says.
func saysOnlyKind(msg string, kind error) bool {
	return kind != nil && strings.EqualFold(strings.TrimRight(strings.TrimSpace(msg), ".!"), kind.Error())
}

// summary is what went wrong, without the operation and key that Error
// adds around it: the kind, the status and code, the message, the
// provider's field-level details and the cause, each said once. A cause whose text already says the kind (a
// *ValidationError, a *ValidationError, a wrapped sentinel) stands in its place;
// a status, code or message the cause already says (an error of the same
// operation carried as a cause) or that repeats the kind is left out; a
// cause's own "provider: " prefix is dropped under a head that names the
// provider.
func (e *APIError) summary() string {
	var b strings.Builder
	cause := ""
	if e.Err != nil && e.Err != e.Kind {
		cause = e.Err.Error()
		if e.Provider != "" {
			cause = strings.ReplaceAll(cause, e.Provider+": ", "")
		}
	}
	switch {
	case e.Kind == nil && cause != "":
		b.WriteString(cause)
		cause = ""
	case e.Kind == nil:
		b.WriteString("error")
	case cause != "" && strings.Contains(cause, e.Kind.Error()):
		b.WriteString(cause) // the cause says the kind itself
		cause = ""
	default:
		b.WriteString(e.Kind.Error())
	}
	said := b.String() + cause
	if e.StatusCode != 0 && !strings.Contains(said, fmt.Sprintf("(HTTP %d", e.StatusCode)) {
		fmt.Fprintf(&b, " (HTTP %d", e.StatusCode)
		if e.Code != "" {
			b.WriteString(" " + e.Code)
		}
		b.WriteByte(')')
	} else if e.StatusCode == 0 && e.Code != "" && !strings.Contains(said, e.Code) {
		b.WriteString(" (" + e.Code + ")")
	}
	if e.Message != "" && e.Message != e.Code && !saysOnlyKind(e.Message, e.Kind) && !strings.Contains(said, e.Message) &&
		!errortext.SharesPhrase(said, e.Message) {
		b.WriteString(": " + e.Message)
	}
	writeDetails(&b, e.Details, cause)
	if cause != "" {
		b.WriteString(": " + cause)
	}
	return b.String()
}

// redactFields passes every text field a server fills (Code, Message,
// RequestID, Details) through redact.String and turns their control
// characters into spaces, so that no printed form of the error (%+v, %d, a
// log of its fields) shows what a hostile server echoed or forges a line.
// The client calls it on every *APIError it returns.
// Each text is first cut to its bound (maxServerText, maxServerCode,
// maxServerDetails), so that a hostile server cannot make the error cost
// a megabyte on every print.
func (e *APIError) redactFields() {
	r := e.redactor()
	e.Code = r.ServerText(redact.Cut(e.Code, maxServerCode))
	e.Message = r.ServerText(redact.Cut(e.Message, maxServerText))
	e.RequestID = r.ServerText(redact.Cut(e.RequestID, maxServerCode))
	if len(e.Details) > maxServerDetails {
		e.Details = e.Details[:maxServerDetails:maxServerDetails]
	}
	for i := range e.Details {
		d := &e.Details[i]
		d.Field = r.ServerText(redact.Cut(d.Field, maxServerCode))
		d.Reason = r.ServerText(redact.Cut(d.Reason, maxServerText))
		d.Code = r.ServerText(redact.Cut(d.Code, maxServerCode))
	}
}

// redactor is the redactor of the client's own secrets (nil for none).
func (e *APIError) redactor() *redact.Redactor {
	if e.secrets == nil {
		return nil
	}
	return e.secrets()
}

// Unwrap gives errors.Is and errors.As both the kind and the cause.
func (e *APIError) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// temporary reports whether the same operation, resumed later with the same
// key, may still succeed: transport failures, 5xx, 429, spent retries or
// budget, a context canceled or past its deadline, and a refused 301/302/303
// answering a POST (an attempt may already have reached the server or run:
// the outcome is unknown until the operation is resumed with its key).
// Conflicts, validation errors and other 4xx answers are final.
func (e *APIError) temporary() bool {
	switch {
	case e.noResume, errors.Is(e, ErrKeyExpired):
		return false
	case redirectMayHaveRun(e), errors.Is(e, ErrRetriesExhausted),
		errors.Is(e, ErrTransport), errors.Is(e, ErrServer), errors.Is(e, ErrRateLimited),
		errors.Is(e.Kind, context.Canceled), errors.Is(e.Kind, context.DeadlineExceeded),
		errors.Is(e.Kind, ErrJournal), errors.Is(e.Kind, ErrJournalFenced), errors.Is(e.Kind, ErrJournalLeased):
		// call again with the reference: it resumes or returns the outcome
		return true
	}
	return false
}

// redirectMayHaveRun reports a refused redirect that likely means the
// request ran (redirectError.MayHaveRun): its outcome is unknown.
func redirectMayHaveRun(e *APIError) bool {
	var re *redirectError
	return errors.As(e.Err, &re) && re.MayHaveRun
}

// resumable reports whether running the very same operation again, with
// the same key and body, may succeed later: it is Temporary (network, 5xx,
// 429, spent retries or budget, a context that ended while an attempt may
// have been in flight) or its kind is resumable (NewResumableKind: a
// balance to top up, say, whose answer servers do not store). It is false
// for an operation without a key (nothing ties a new run to this one),
// for a key past its window, and for conflicts, validation errors,
// declined or failed charges and refused credentials.
func (e *APIError) resumable() bool {
	if e.Key.IsZero() || errors.Is(e, ErrKeyExpired) {
		return false
	}
	return e.temporary() || resumableKind(e.Kind)
}

// IsTemporary reports whether err is an *APIError whose failure may pass,
// so that the same operation, resumed later with the same key, may still
// succeed: transport failures, 5xx, 429, spent retries or budget, a
// context canceled or past its deadline, a journal that failed or is held
// by another run, and a refused 301/302/303 answering a POST (an attempt
// may already have reached the server or run: the outcome is unknown until
// the operation is resumed with its key). Conflicts, validation errors,
// other 4xx answers and a key past its window are final. It says nothing
// of the key: for a job queue deciding whether to run an operation again,
// IsResumable is the question to ask.
func IsTemporary(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.temporary()
}

// IsResumable reports whether err is an *APIError whose operation, run
// again later with the same key and body (WithKey(KeyOf(err))), may
// succeed: it is temporary (IsTemporary) or the account lacked the
// balance (coinepay.ErrInsufficientBalance: servers do not store that
// answer, so a top-up makes the same key succeed). It is false for an
// operation without a key (nothing ties a new run to this one), for a key
// past its window, and for conflicts, validation errors, declined or
// failed charges and refused credentials. A job queue can rely on it
// alone: retry the job when it is true, give up when it is false.
//
//	if payonce.IsResumable(err) {
//		job.Key, _ = payonce.KeyOf(err).MarshalText() // the key and its age
//	}
//	// later, in any process:
//	key, err := payonce.ParseKey(string(job.Key))
//	client.Charges.Create(ctx, sameRequest, payonce.WithKey(key))
func IsResumable(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.resumable()
}

// ValidationError reports input refused by the client before anything was
// sent: a bad amount, card, currency or request field. Its sentinel is
// ErrInvalidAmount, ErrInvalidCard or ErrInvalidRequest, and it always
// matches ErrInvalidRequest too: errors.Is(err, ErrInvalidRequest) catches
// every refusal of input, errors.Is(err, ErrInvalidCard) the specific kind.
type ValidationError struct {
	Field  string // the JSON field, e.g. "card.number"
	Reason string // what is wrong, never the value itself
	Err    error  // the sentinel
}

// Error names the sentinel, the field and the reason, each once, never the
// value: a field the sentinel's text already names ("invalid amount" and
// "amount") is not repeated.
func (e *ValidationError) Error() string {
	head := "invalid request"
	if e.Err != nil {
		head = e.Err.Error()
	}
	if e.Field == "" || strings.HasSuffix(head, " "+e.Field) {
		return head + ": " + e.Reason
	}
	return head + ": " + e.Field + ": " + e.Reason
}

// Unwrap returns the sentinel (ErrInvalidAmount, ErrInvalidCard or
// ErrInvalidRequest) and ErrInvalidRequest, of which every refusal of input
// is a kind.
func (e *ValidationError) Unwrap() []error {
	if e.Err == nil || e.Err == ErrInvalidRequest {
		return []error{ErrInvalidRequest}
	}
	return []error{e.Err, ErrInvalidRequest}
}

func invalid(sentinel error, field, reason string) *ValidationError {
	return &ValidationError{Field: field, Reason: reason, Err: sentinel}
}

// maxPrintedKey is the most bytes of a key an error text shows.
const maxPrintedKey = 256

// printableKey is key as an error text shows it: as is when it is printable
// ASCII of at most maxPrintedKey bytes (every key the providers accept),
// else quoted and cut, so that a refused key can neither forge a log line
// (CR, LF, escapes) nor make the text grow without end. APIError.Key keeps
// the key whole.
func printableKey(key string) string {
	if len(key) <= maxPrintedKey && strings.IndexFunc(key, func(r rune) bool { return r <= 0x20 || r >= 0x7f }) < 0 {
		return key
	}
	if len(key) > maxPrintedKey {
		return strconv.Quote(key[:maxPrintedKey]) + "..."
	}
	return strconv.Quote(key)
}

// Bounds on the text a server puts in an error: a hostile or broken
// server could otherwise send a megabyte of message that every Error()
// call and every log line would redact and print again.
const (
	maxServerText    = 4096 // bytes of APIError.Message and of a detail's Reason
	maxServerCode    = 256  // bytes of APIError.Code, RequestID and a detail's Field and Code
	maxServerDetails = 100  // entries of APIError.Details
)

// serverCause is the cause of an error that quotes what a server sent (a
// decoder names the value it could not read): its text, cut and redacted
// as serverText makes it, without the error it came from, so that no walk
// of the chain (errors.Unwrap, errors.As) reaches the server's bytes.
func serverCause(err error) error {
	return errors.New(redact.ServerText(redact.Cut(err.Error(), maxServerText)))
}
