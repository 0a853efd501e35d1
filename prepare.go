package payonce

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// prepare fixes what every attempt sends, before the first one: the key
// (resolved and checked once), the call's policy, the request's
// validation, the body bytes (marshalled once) and the URL. Nothing is
// sent when it fails.
func (op *operation) prepare() (Meta, error) {
	c, req := op.c, op.req
	now := c.now()
	if err := c.checkReference(req, op.opts); err != nil {
		return Meta{}, op.fail(errKind(err, ErrInvalidRequest), err)
	}
	if req.Keyed {
		if err := op.resolveKey(now); err != nil {
			return Meta{}, err
		}
		if err := op.checkKey(now); err != nil {
			return op.meta(nil), err
		}
	}
	if err := op.setPolicy(); err != nil {
		kind := ErrInvalidRequest
		if errors.Is(err, ErrInvalidConfig) {
			kind = ErrInvalidConfig
		}
		return op.meta(nil), op.fail(kind, err)
	}
	if req.Validate != nil {
		if err := req.Validate(); err != nil {
			kind := ErrInvalidRequest
			var ve *ValidationError
			if errors.As(err, &ve) {
				kind = ve.Err
			}
			return op.meta(nil), op.fail(kind, err)
		}
	}
	if req.Body != nil {
		b, err := corekit.MarshalWire(req.Body)
		if err != nil {
			return op.meta(nil), op.fail(ErrInvalidRequest, fmt.Errorf("encode body: %w", err))
		}
		op.body = b
	}
	op.policy.initBackOff(&op.bo)
	op.prepareURL()
	return Meta{}, nil
}

// resolveKey resolves the operation's key and its creation time.
func (op *operation) resolveKey(now time.Time) *APIError {
	c := op.c
	key, err := op.opts.resolveKey(now)
	if err != nil {
		kind := errKind(err, ErrTransport) // ErrTransport: no random source for a new key
		var ke *ValidationError
		if errors.As(err, &ke) {
			kind = ke.Err
		}
		return op.fail(kind, err)
	}
	if err := c.checkExplicitKey(&op.opts); err != nil {
		return op.fail(ErrKeyRequired, err) // a key made by this call is never used
	}
	op.key, op.created, op.createdNow = key.id, key.created, op.opts.keyMade
	return nil
}

// checkKey checks the key against the provider's rules and, outside a
// journaled run (which checks on the journal's clock, reserve.go), its
// creation time.
func (op *operation) checkKey(now time.Time) *APIError {
	if err := validateKey(op.c.rules, op.key); err != nil {
		return op.fail(keyKind(err), err)
	}
	if !op.opts.hasReference {
		return op.checkCreated(now)
	}
	return nil
}

// setPolicy applies the call's policy, timeout and header options: an
// invalid one, or an attempt left without any timeout, is refused.
func (op *operation) setPolicy() error {
	if op.opts.err != nil {
		return op.opts.err
	}
	if op.opts.policy != nil {
		op.policy = *op.opts.policy
	}
	op.timeout = op.policy.AttemptTimeout
	if op.opts.timeout > 0 {
		op.timeout = op.opts.timeout
	}
	if op.timeout == 0 {
		op.timeout = op.c.httpClient.Timeout
	}
	if op.timeout <= 0 {
		return fmt.Errorf("%w: an attempt needs a timeout: set AttemptTimeout, WithCallTimeout or the http.Client's Timeout", ErrInvalidConfig)
	}
	if op.key != "" && op.c.rules.Window > 0 && op.policy.KeySafetyMargin < op.timeout {
		// The last attempt, sent just inside the window, could arrive after it.
		return fmt.Errorf("%w: KeySafetyMargin (%s) must be at least the attempt timeout (%s)", ErrInvalidConfig, op.policy.KeySafetyMargin, op.timeout)
	}
	return nil
}

// prepareURL builds the request's URL below the base URL, once.
func (op *operation) prepareURL() {
	op.url = *op.c.baseURL
	u := &op.url
	u.Path += op.req.Path
	u.RawPath = ""
	if strings.Contains(op.req.Path, "%") {
		if p, err := url.PathUnescape(u.Path); err == nil {
			u.RawPath, u.Path = u.Path, p
		}
	}
	u.RawQuery = op.req.Query.Encode()
}

// checkCreated refuses a key creation time beyond a minute ahead
// of now (the clock the age is measured on): it would make the key look
// younger than it is. Nothing is sent.
func (op *operation) checkCreated(now time.Time) *APIError {
	if op.created.After(now.Add(corekit.KeyClockTolerance)) {
		return op.fail(ErrKeyCreatedInFuture, fmt.Errorf("created %s, %s ahead of the clock",
			op.created.UTC().Format(time.RFC3339), op.created.Sub(now).Round(time.Second)))
	}
	return nil
}
