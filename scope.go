package payonce

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/redact"
)

// journalIdentity is what names a client's journal entries and keys their
// fingerprints: an explicit scope (WithScope) or the credential identity a
// typed client derives (WithScopeIdentity), completed with the base URL's
// origin, and the fingerprint key (WithFingerprintKey).
type journalIdentity struct {
	explicit bool   // WithScope was given: its scope is used as it is
	identity string // WithScopeIdentity: the scope is identity@origin
	fpKey    []byte // WithFingerprintKey; nil: fingerprints leave card data out
}

// WithScopeIdentity names the credential a client acts for, e.g.
// "a55:client-1": unless WithScope sets a scope, journal entries are
// recorded under the identity and the origin (scheme, host and port) of
// the base URL, ScopeOf(identity, baseURL), so that one credential on two
// environments never shares an entry. Typed clients set it; it must never
// hold a secret (a keyed digest where the credential's name is one).
func WithScopeIdentity(identity string) Option {
	return func(c *Client) error {
		if identity == "" || len(identity) > corekit.MaxReferenceLen || !printable(identity) {
			return fmt.Errorf("%w: scope identity must be non-empty printable UTF-8 of at most %d bytes", ErrInvalidConfig, corekit.MaxReferenceLen)
		}
		c.ident.identity = identity
		return nil
	}
}

// ScopeOf returns the scope a client with the credential identity and the
// base URL records its journal entries under: the identity, "@" and the
// URL's origin, its scheme and host lowercased and a default port (443
// for https, 80 for http) left out, e.g.
// "a55:client-1@https://sandbox.api.a55.tech". The origin never holds an
// "@", so no two (identity, origin) pairs give one scope.
func ScopeOf(identity, baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", fmt.Errorf("%w: scope: base URL must be an absolute http(s) URL without user info", ErrInvalidConfig)
	}
	s := identity + "@" + origin(u)
	if identity == "" || len(s) > corekit.MaxReferenceLen || !printable(s) {
		return "", fmt.Errorf("%w: scope %q is empty, not printable or longer than %d bytes: pass payonce.WithScope",
			ErrInvalidConfig, redact.String(s), corekit.MaxReferenceLen)
	}
	return s, nil
}

// origin is u's scheme, host and port, lowercased, without a default port.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return scheme + "://[" + host + "]"
	}
	return scheme + "://" + host
}

// resolveScope settles the client's scope once every option ran: an
// explicit WithScope wins, else the identity and the base URL's origin. A
// client with a journal and no scope is refused: its entries would meet
// those of every other client without one.
func (c *Client) resolveScope() error {
	if !c.ident.explicit && c.ident.identity != "" {
		s, err := ScopeOf(c.ident.identity, c.baseURL.String())
		if err != nil {
			return err
		}
		c.scope = s
	}
	if c.journal != nil && c.scope == "" {
		return fmt.Errorf("%w: a journal needs a scope, and this client's credential names no identity (an access token, or a core client): "+
			"pass payonce.WithScope with a name of the merchant account and its environment, never a secret", ErrInvalidConfig)
	}
	return nil
}
