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
