package payonce

import (
	"fmt"

	"github.com/payonce/payonce/internal/corekit"
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
// the base URL ("a55:client-1@https://sandbox.example"), so that one credential on two
// environments never shares an entry. Typed clients set it; it must never
// hold a secret (a keyed digest where the credential's name is one).
func WithScopeIdentity(identity string) Option {
	return func(c *Client) error {
		if identity == "" || len(identity) > corekit.MaxReferenceLen || !corekit.Printable(identity) {
			return fmt.Errorf("%w: scope identity must be non-empty printable UTF-8 of at most %d bytes", ErrInvalidConfig, corekit.MaxReferenceLen)
		}
		c.ident.identity = identity
		return nil
	}
}

// resolveScope settles the client's scope once every option ran: an
// explicit WithScope wins, else the identity and the base URL's origin. A
// client with a journal and no scope is refused: its entries would meet
// those of every other client without one.
func (c *Client) resolveScope() error {
	if !c.ident.explicit && c.ident.identity != "" {
		s, err := corekit.ScopeOf(c.ident.identity, c.baseURL.String())
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
