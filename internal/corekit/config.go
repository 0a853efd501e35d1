package corekit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"time"
)

// Config is what a payonce.Option sets while payonce.NewClient builds a
// client: Client is the root package's client under construction, which
// only the root's own options touch; the other fields are what a typed
// client sets on the core and never a merchant.
type Config struct {
	Client any

	Provider      string           // the provider's name in errors and logs
	Rules         KeyRules         // the provider's key rules (DefaultKeyRules until set)
	Codec         any              // decodes the provider's answers (the root's codec interface)
	ScopeIdentity string           // the credential identity journal entries are scoped by
	LegacyScopes  []string         // the scopes earlier payonce versions gave this credential
	Now           func() time.Time // the client's clock (WithClock); nil: time.Now
	// Sleep is how the client waits between attempts (WithSleep); nil: a
	// timer.
	Sleep func(ctx context.Context, d time.Duration) error

	views []*View
}

// Option is the form of a payonce.Option: a func(*Config) error is
// assignable to it.
type Option = func(*Config) error

// maxProvider bounds WithProvider.
const maxProvider = 64

// WithProvider names the provider in errors and logs. A name with a
// control character or longer than 64 bytes is refused.
func WithProvider(name string) Option {
	return func(c *Config) error {
		if len(name) > maxProvider || !Printable(name) {
			return fmt.Errorf("%w: provider name must be printable and at most %d bytes", ErrInvalidConfig, maxProvider)
		}
		c.Provider = name
		return nil
	}
}

// WithKeyRules sets the provider's key rules.
func WithKeyRules(r KeyRules) Option {
	return func(c *Config) error {
		if r.MaxLen < 0 || r.MinLen < 0 || (r.MaxLen > 0 && r.MinLen > r.MaxLen) || r.Window < 0 {
			return fmt.Errorf("%w: key rules", ErrInvalidConfig)
		}
		c.Rules = r
		return nil
	}
}

// WithCodec sets how answers are decoded: cd has the root package's
// codec methods (DecodeSuccess, DecodeError), which payonce.NewClient
// checks.
func WithCodec(cd any) Option {
	return func(c *Config) error {
		if IsNil(cd) {
			return fmt.Errorf("%w: nil codec", ErrInvalidConfig)
		}
		c.Codec = cd
		return nil
	}
}

// WithScopeIdentity names the credential a client acts for, e.g.
// "a55:client-1": unless payonce.WithScope sets a scope, journal entries
// are recorded under the identity and the origin of the base URL
// (ScopeOf), so that one credential on two environments never shares an
// entry. It must never hold a secret.
func WithScopeIdentity(identity string) Option {
	return func(c *Config) error {
		if identity == "" || len(identity) > MaxReferenceLen || !Printable(identity) {
			return fmt.Errorf("%w: scope identity must be non-empty printable UTF-8 of at most %d bytes", ErrInvalidConfig, MaxReferenceLen)
		}
		c.ScopeIdentity = identity
		return nil
	}
}

// WithLegacyScopes names the scopes earlier payonce versions recorded this
// credential's journal entries under (before scopes named the base URL's
// origin, or when a provider's digest changed): a client that finds
// entries under one of them, unmapped, refuses to run rather than miss
// them (see payonce.WithLegacyScopes). Scopes that could not have been
// stored (empty, not printable, too long) are left out; the scopes are
// query values only, never printed where a client's secrets are not cut.
func WithLegacyScopes(scopes ...string) Option {
	return func(c *Config) error {
		for _, s := range scopes {
			if s != "" && len(s) <= MaxReferenceLen && Printable(s) {
				c.LegacyScopes = append(c.LegacyScopes, s)
			}
		}
		return nil
	}
}

// WithClock sets the clock the client measures keys' ages, signs and
// checks cards' expiry by: a test's clock (payoncetest.ClientClock), or
// an operator command's injected one.
func WithClock(now func() time.Time) Option {
	return func(c *Config) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidConfig)
		}
		c.Now = now
		return nil
	}
}

// WithSleep sets how the client waits before a retry: a test's, which
// moves its fake clock on by d (and records it) instead of sleeping, so
// that a wait of a minute costs nothing and is asserted exactly. It
// returns ctx's error when ctx ends first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Config) error {
		if sleep == nil {
			return fmt.Errorf("%w: nil sleep", ErrInvalidConfig)
		}
		c.Sleep = sleep
		return nil
	}
}

// View is what a typed client reads back from the core client it built
// (Capture): the settings NewClient resolved.
type View struct {
	Provider   string           // the provider's name
	BaseURL    string           // the base URL, without a trailing slash
	HTTPClient *http.Client     // sends every attempt (and a typed client's token requests)
	Now        func() time.Time // the client's clock (WithClock)
	Scope      string           // the journal scope, "" for none
	Logger     *slog.Logger     // the client's redacting logger
	Rules      KeyRules         // the key rules in force
	Journal    any              // the client's payonce.Journal, nil without one
	// RequestMatches reports whether a request (method, escaped path and
	// the exact body bytes) is the one entry, a payonce.JournalEntry, was
	// recorded with.
	RequestMatches func(entry any, method, path string, body []byte) bool
	// PlaceScopes is the check a client makes before its first journal
	// use (payonce.WithLegacyScopes): nil, or the kind and the error that
	// refuse the use.
	PlaceScopes func(ctx context.Context) (kind, err error)
}

// Capture has payonce.NewClient fill *v with the client's settings once
// it is built.
func Capture(v *View) Option {
	return func(c *Config) error {
		if v == nil {
			return errors.New("corekit: nil view")
		}
		c.views = append(c.views, v)
		return nil
	}
}

// Fill gives v to every view Capture asked for.
func (c *Config) Fill(v View) {
	for _, dst := range c.views {
		*dst = v
	}
}

// IsNil reports a nil interface or an interface holding a nil pointer,
// map, slice, func or channel: an option given one refuses it, since the
// first call through it would panic.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// SignerFunc adapts a function to payonce.Signer.
type SignerFunc func(req *http.Request, body []byte) error

// Sign calls f.
func (f SignerFunc) Sign(req *http.Request, body []byte) error { return f(req, body) }
