package payonce

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// RetryPolicy says how one operation is retried. The wait between attempts
// comes from a fresh backoff/v4 ExponentialBackOff per operation (jittered
// by RandomizationFactor), or from the server's Retry-After when it sends
// one, capped by MaxRetryAfter.
type RetryPolicy struct {
	MaxAttempts         int           // attempts in all, first included (>= 1)
	InitialInterval     time.Duration // first wait
	MaxInterval         time.Duration // longest wait
	Multiplier          float64       // growth per retry (>= 1)
	RandomizationFactor float64       // jitter: each wait is within ±factor of the interval (0..1)
	MaxElapsedTime      time.Duration // no retry starts after this long; 0 = no limit
	MaxRetryAfter       time.Duration // cap on a server's Retry-After (> 0)
	AttemptTimeout      time.Duration // per-attempt timeout; 0 keeps the http.Client's own Timeout
	// KeySafetyMargin: no attempt is sent once the key is older than the
	// provider's window minus this margin (default 1 h). It must be above
	// 0 and at least the attempt's timeout: an attempt sent just inside
	// the window may take that long to arrive, and one arriving after it
	// could be executed a second time.
	KeySafetyMargin time.Duration
}

// DefaultRetryPolicy returns the default policy: 5 attempts, 250 ms
// doubling to at most 10 s with ±50% jitter, at most 2 minutes in all,
// Retry-After capped at 30 s, 30 s per attempt, a 1 h safety margin before
// the key's 24 h window ends.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:         5,
		InitialInterval:     250 * time.Millisecond,
		MaxInterval:         10 * time.Second,
		Multiplier:          2,
		RandomizationFactor: 0.5,
		MaxElapsedTime:      2 * time.Minute,
		MaxRetryAfter:       30 * time.Second,
		AttemptTimeout:      30 * time.Second,
		KeySafetyMargin:     time.Hour,
	}
}

// validate reports a policy that cannot work, wrapping ErrInvalidConfig.
func (p RetryPolicy) validate() error {
	switch {
	case p.MaxAttempts < 1:
		return fmt.Errorf("%w: retry policy: MaxAttempts must be at least 1", ErrInvalidConfig)
	case p.InitialInterval < 0 || p.MaxInterval < p.InitialInterval:
		return fmt.Errorf("%w: retry policy: need 0 <= InitialInterval <= MaxInterval", ErrInvalidConfig)
	case !(p.Multiplier >= 1) || math.IsInf(p.Multiplier, 1):
		// Written so that NaN fails: it passes every ordered comparison
		// and turns the backoff's waits negative (no wait at all).
		return fmt.Errorf("%w: retry policy: Multiplier must be a finite number of at least 1", ErrInvalidConfig)
	case !(p.RandomizationFactor >= 0 && p.RandomizationFactor <= 1):
		return fmt.Errorf("%w: retry policy: RandomizationFactor must be within 0..1", ErrInvalidConfig)
	case p.MaxRetryAfter <= 0:
		return fmt.Errorf("%w: retry policy: MaxRetryAfter must be above 0 (it caps a server's Retry-After)", ErrInvalidConfig)
	case p.MaxElapsedTime < 0 || p.AttemptTimeout < 0 || p.KeySafetyMargin < 0:
		return fmt.Errorf("%w: retry policy: durations must not be negative", ErrInvalidConfig)
	case p.KeySafetyMargin == 0:
		return fmt.Errorf("%w: retry policy: KeySafetyMargin must be above 0 (an attempt takes time to arrive)", ErrInvalidConfig)
	case p.KeySafetyMargin < p.AttemptTimeout:
		return fmt.Errorf("%w: retry policy: KeySafetyMargin must be at least AttemptTimeout (an attempt may take that long to arrive)", ErrInvalidConfig)
	}
	return nil
}

// newBackOff returns the operation's own ExponentialBackOff (the type is
// not safe to share between operations).
func (p RetryPolicy) newBackOff() *backoff.ExponentialBackOff {
	return p.initBackOff(new(backoff.ExponentialBackOff))
}

// initBackOff sets b up for a new operation and returns it (an operation
// keeps its ExponentialBackOff inside itself: one allocation less).
func (p RetryPolicy) initBackOff(b *backoff.ExponentialBackOff) *backoff.ExponentialBackOff {
	*b = backoff.ExponentialBackOff{
		InitialInterval:     p.InitialInterval,
		RandomizationFactor: p.RandomizationFactor,
		Multiplier:          p.Multiplier,
		MaxInterval:         p.MaxInterval,
		MaxElapsedTime:      p.MaxElapsedTime,
		Stop:                backoff.Stop,
		Clock:               backoff.SystemClock,
	}
	b.Reset()
	return b
}

// RetryBudget is a client-wide retry quota in the spirit of the AWS SDK's:
// every retry spends tokens (more after a timeout), every success puts some
// back. During an outage the budget runs dry and operations fail fast with
// ErrRetriesExhausted ("retry budget exhausted") instead of multiplying the
// load a fleet puts on the provider. Safe for concurrent use; share one per client.
type RetryBudget struct {
	mu          sync.Mutex
	capacity    int
	tokens      int
	retryCost   int
	timeoutCost int
	successGain int
}

// NewRetryBudget returns a full budget of capacity tokens; a retry costs 5,
// a retry after a timeout 10, and a success without retry returns 1 (a
// success after retries returns what they cost).
func NewRetryBudget(capacity int) *RetryBudget {
	return &RetryBudget{capacity: capacity, tokens: capacity, retryCost: 5, timeoutCost: 10, successGain: 1}
}

// defaultRetryBudget is the capacity of the budget a client gets by
// default (WithRetryBudget shares another or none).
const defaultRetryBudget = 500

// Available returns the tokens left.
func (b *RetryBudget) Available() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}

// acquire spends the cost of one retry; false when not enough is left.
func (b *RetryBudget) acquire(timeout bool) (int, bool) {
	cost := b.retryCost
	if timeout {
		cost = b.timeoutCost
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < cost {
		return 0, false
	}
	b.tokens -= cost
	return cost, true
}

// release returns tokens after a success: what its retries cost, or the
// success gain when there were none.
func (b *RetryBudget) release(spent int) {
	if spent == 0 {
		spent = b.successGain
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(b.capacity, b.tokens+spent)
}

// retryableStatus reports whether an HTTP status may succeed on a retry with
// the same key: 429, 500, 502, 503 and 504. Every other status, 409 above
// all, is final.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// stopError ends the attempt loop at once, without a retry.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// retryableError reports whether a transport error may succeed on a retry:
// refused or reset connections, EOF and per-attempt timeouts may; TLS
// failures (certificate and x509 errors, alerts sent or received such as
// a protocol version refused, a peer that does not speak TLS), a cancelled
// or expired context and the client's own stops (key too old, budget spent,
// signer failure, refused redirect) may not.
func retryableError(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || tlsFailure(err) {
		return false
	}
	var stop *stopError
	return !errors.As(err, &stop)
}

// tlsFailure reports a TLS failure a retry cannot mend.
func tlsFailure(err error) bool {
	var (
		certErr       *tls.CertificateVerificationError
		recordErr     tls.RecordHeaderError
		alertErr      tls.AlertError
		echErr        *tls.ECHRejectionError
		unknownCA     x509.UnknownAuthorityError
		invalidCert   x509.CertificateInvalidError
		hostErr       x509.HostnameError
		rootsErr      x509.SystemRootsError
		constraintErr x509.ConstraintViolationError
		criticalErr   x509.UnhandledCriticalExtension
		algorithmErr  x509.InsecureAlgorithmError
		opErr         *net.OpError
	)
	switch {
	case errors.As(err, &certErr), errors.As(err, &recordErr), errors.As(err, &alertErr), errors.As(err, &echErr),
		errors.As(err, &unknownCA), errors.As(err, &invalidCert), errors.As(err, &hostErr), errors.As(err, &rootsErr),
		errors.As(err, &constraintErr), errors.As(err, &criticalErr), errors.As(err, &algorithmErr):
		return true
	case errors.As(err, &opErr) && (opErr.Op == "remote error" || opErr.Op == "local error"):
		// crypto/tls reports an alert received ("remote error: tls:
		// protocol version not supported") or sent this way.
		return true
	}
	// crypto/tls reports some handshake failures as plain errors ("tls:
	// server selected unsupported protocol version 301").
	if isTimeout(err) {
		return false
	}
	// net/http turns a peer that answers TLS with plain HTTP into a plain
	// error too.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if msg := e.Error(); strings.HasPrefix(msg, "tls: ") || strings.HasSuffix(msg, "server gave HTTP response to HTTPS client") {
			return true
		}
	}
	return false
}

// isTimeout reports a per-attempt timeout (they cost the budget more):
// any error in err's tree whose Timeout is true, since a wrapper's own
// Timeout (a *url.Error's) looks one level down only.
func isTimeout(err error) bool {
	if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
		return true
	}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		return isTimeout(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if isTimeout(inner) {
				return true
			}
		}
	}
	return false
}

// parseRetryAfter reads a Retry-After value, in seconds or as an HTTP date
// relative to now; ok is false when there is none or it cannot be read.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		if s > int64(365*24*time.Hour/time.Second) {
			s = int64(365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
