package payonce

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/payonce/payonce/internal/corekit"
)

// journalIdentity is what names a client's journal entries and keys their
// fingerprints: an explicit scope (WithScope) or the credential identity a
// typed client derives (WithScopeIdentity), completed with the base URL's
// origin, and the fingerprint key (WithFingerprintKey); and the scopes
// earlier payonce versions recorded the client's entries under.
type journalIdentity struct {
	explicit bool   // WithScope was given: its scope is used as it is
	identity string // WithScopeIdentity: the scope is identity@origin
	fpKey    []byte // WithFingerprintKey; nil: fingerprints leave card data out
	legacy   []string
	// owned are the earlier scopes the caller says the client owns
	// (WithLegacyScopes): their entries move into the client's scope.
	owned []string
	// earlier are legacy and owned together, without the client's own
	// scope: the forms a new reservation's reference is looked up under.
	earlier []string
	place   *scopePlacement
}

// scopePlacement is the check a client makes once, at its first journal
// use, that no entry it should find lies under another form of its scope.
type scopePlacement struct {
	mu   sync.Mutex
	done atomic.Bool
}

// resolveScope settles the client's scope once every option ran: an
// explicit WithScope wins, else the identity and the base URL's origin. A
// client with a journal and no scope is refused: its entries would meet
// those of every other client without one.
func (c *Client) resolveScope() error {
	if !c.ident.explicit && c.ident.identity != "" {
		s, err := scopeOf(c.ident.identity, c.baseURL.String())
		if err != nil {
			return err
		}
		c.scope = s
	}
	if c.journal != nil && c.scope == "" {
		return fmt.Errorf("%w: a journal needs a scope, and this client's credential names no identity (an access token, or a core client): "+
			"pass payonce.WithScope with a name of the merchant account and its environment, never a secret", ErrInvalidConfig)
	}
	if slices.Contains(c.ident.owned, c.scope) {
		return fmt.Errorf("%w: WithLegacyScopes names the client's own scope %q", ErrInvalidConfig, c.scope)
	}
	c.ident.earlier = nil
	for _, s := range append(slices.Clone(c.ident.legacy), c.ident.owned...) {
		if s != c.scope && !slices.Contains(c.ident.earlier, s) {
			c.ident.earlier = append(c.ident.earlier, s)
		}
	}
	c.ident.place = &scopePlacement{}
	return nil
}

// WithLegacyScopes names scopes an earlier payonce (or an earlier
// configuration) recorded this client's journal entries under: at its
// first journal use the client moves their entries into its own scope
// (JournalUpgrader.MoveScope, all or none: a reference both scopes hold
// is refused), so that a reference recorded before the upgrade is answered
// from the journal or resumed, never run again. Typed clients derive
// today's scope from the credential and the base URL's origin; before
// that, A55 recorded under "a55:<client_id>" (or "a55:" with an access
// token) and Coinepay under a plain digest of the API key. See
// docs/journal.md ("Upgrades"); `payonce journal scopes` shows the
// scopes a journal holds and moves them by hand.
func WithLegacyScopes(scopes ...string) Option {
	return option(func(c *Client) error {
		for _, s := range scopes {
			if s == "" || len(s) > corekit.MaxReferenceLen || !corekit.Printable(s) {
				return fmt.Errorf("%w: legacy scope must be non-empty printable UTF-8 of at most %d bytes", ErrInvalidConfig, corekit.MaxReferenceLen)
			}
			if !slices.Contains(c.ident.owned, s) {
				c.ident.owned = append(c.ident.owned, s)
			}
		}
		return nil
	})
}

// JournalUpgrader is a Journal that can carry entries an earlier payonce
// wrote into today's forms: every backend of package journal is one. A
// Journal without it still works, but a client cannot check that no entry
// of its credential lies under an earlier form of its scope, and keeps
// the plain fingerprints of old entries as they are.
type JournalUpgrader interface {
	// Scopes counts the entries of every scope, or only of the scopes
	// given (a scope without entries is left out), ordered by scope.
	Scopes(ctx context.Context, only ...string) ([]ScopeCount, error)
	// MoveScope moves every entry of scope from into scope to, atomically,
	// and returns how many it moved. An entry of to whose reference from
	// holds too gives way to from's when it is pending, was never sent
	// (Sent false, no attempt counted) and no live run holds it: its key
	// never left, and from's entry, which may have run, is the
	// reference's; the moved entry's fence is raised above the replaced
	// one's. Nothing moves when another entry of to holds one of from's
	// references (journal.ErrScopeCollision), or a pending entry of from,
	// or one of to that would give way, is leased to a live run
	// (ErrJournalLeased), both wrapped.
	MoveScope(ctx context.Context, from, to string) (int64, error)
	// ReplaceFingerprint sets the fingerprint of (scope, reference) to fp
	// when it is old, and reports whether it did (false: the entry holds
	// another fingerprint now); an absent entry is journal.ErrNotFound.
	// Nothing else of the entry changes, its state included.
	ReplaceFingerprint(ctx context.Context, scope, reference, old, fp string) (bool, error)
}

// ScopeCount is how many entries a journal holds under one scope.
type ScopeCount struct {
	Scope   string `json:"scope"`
	Pending int64  `json:"pending"`
	Settled int64  `json:"settled"`
}

// LegacyScopeError is the cause of an ErrInvalidConfig refusal: the
// journal holds entries under Scope, the form an earlier payonce gave the
// client's credential, which the client, recording under Own, would not
// find: it would run each of their references again. Nothing was sent.
// At the client's first journal use it refuses every call; later, a run
// whose new reservation's Reference Scope holds (a process of the earlier
// version still writes it) is refused. Map the scope to Own
// (WithLegacyScopes, or the command its text names), or, when they are
// another account's entries, move them out of the way.
type LegacyScopeError struct {
	Scope string
	Own   string
	// Reference is the reference a run found under Scope, when the
	// refusal is one run's (the scope gained entries after the client's
	// first use); "" at the first use.
	Reference        string
	Pending, Settled int64
}

// Error names the two scopes and the command that maps one to the other.
func (e *LegacyScopeError) Error() string {
	held := fmt.Sprintf("the journal holds %d entries (%d pending) under scope %q, the form an earlier payonce gave this client's credential; "+
		"this client records under %q and would run each of their references again", e.Pending+e.Settled, e.Pending, e.Scope, e.Own)
	if e.Reference != "" {
		held = fmt.Sprintf("reference %q is held under scope %q (%d entries, %d pending), the form an earlier payonce gave this client's credential, "+
			"which a process of that version still writes; this client records under %q and would run it again",
			e.Reference, e.Scope, e.Pending+e.Settled, e.Pending, e.Own)
	}
	return fmt.Sprintf("%s: move them with `payonce journal scopes -journal <journal> -from %q -to %q`, or give the client payonce.WithLegacyScopes(%q)",
		held, e.Scope, e.Own, e.Scope)
}

// Unwrap returns ErrInvalidConfig.
func (e *LegacyScopeError) Unwrap() error { return ErrInvalidConfig }

// placeScopes runs, once per client (again after a refusal), before the
// client first reads or writes its journal: entries under an earlier form
// of the client's scope are refused (LegacyScopeError) unless the caller
// owns that scope (WithLegacyScopes), whose entries then move into the
// client's. It costs one query, by primary-key prefix, at the first use.
func (c *Client) placeScopes(ctx context.Context) error {
	p := c.ident.place
	if p == nil || p.done.Load() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done.Load() {
		return nil
	}
	if err := c.findLegacyEntries(ctx); err != nil {
		return err
	}
	p.done.Store(true)
	return nil
}

// findLegacyEntries is placeScopes' one run.
func (c *Client) findLegacyEntries(ctx context.Context) error {
	check := c.ident.earlier
	if len(check) == 0 {
		return nil
	}
	u, ok := c.journal.(JournalUpgrader)
	if !ok {
		if len(c.ident.owned) > 0 {
			return fmt.Errorf("%w: WithLegacyScopes needs a journal that moves entries between scopes (payonce.JournalUpgrader); %T is not one",
				ErrInvalidConfig, c.journal)
		}
		return nil // nothing to ask: the journal cannot say
	}
	counts, err := u.Scopes(ctx, check...)
	if err != nil {
		return journalErr(ctx, fmt.Errorf("journal scopes: %w", err))
	}
	var move []string
	for _, n := range counts {
		if n.Pending+n.Settled == 0 {
			continue
		}
		if !slices.Contains(c.ident.owned, n.Scope) {
			return &LegacyScopeError{Scope: n.Scope, Own: c.scope, Pending: n.Pending, Settled: n.Settled}
		}
		move = append(move, n.Scope)
	}
	for _, from := range move {
		if err := c.moveScope(ctx, u, from); err != nil {
			return err
		}
	}
	return nil
}

// moveScope moves the entries of from, an earlier scope the client owns,
// into its own: all or none (JournalUpgrader.MoveScope).
func (c *Client) moveScope(ctx context.Context, u JournalUpgrader, from string) error {
	if _, err := u.MoveScope(ctx, from, c.scope); err != nil {
		if errors.Is(err, ErrJournalLeased) {
			return journalErr(ctx, fmt.Errorf("move the entries of scope %q into %q: %w", from, c.scope, err))
		}
		return fmt.Errorf("%w: move the entries of scope %q into %q (WithLegacyScopes): %w", ErrInvalidConfig, from, c.scope, err)
	}
	return nil
}

// earlierHolder returns the entry of ref under an earlier form of the
// client's scope (legacy or owned), when one holds it: one read by
// primary key per form, none for a client without earlier forms. A run
// asks it after its reservation stands and before its first byte (see
// operation.reserveEntry), and again before it takes an entry to send.
func (c *Client) earlierHolder(ctx context.Context, ref string) (JournalEntry, bool, error) {
	for _, s := range c.ident.earlier {
		e, err := c.journal.Get(ctx, s, ref)
		switch {
		case err == nil:
			return e, true, nil
		case !errors.Is(err, ErrJournalNotFound):
			// The scope is not named: the earliest Coinepay form is the
			// API key itself.
			return JournalEntry{}, false, journalErr(ctx, fmt.Errorf("read reference %q under the earlier forms of the scope: %w", ref, err))
		}
	}
	return JournalEntry{}, false, nil
}

// placeReference answers held, the entry of a run's reference under an
// earlier form of the client's scope: when the client owns that scope
// (WithLegacyScopes) its entries move into the client's, all or none, and
// the run reserves again (it then takes the moved entry, with its key);
// otherwise the run is refused (LegacyScopeError naming the reference).
func (c *Client) placeReference(ctx context.Context, held JournalEntry) error {
	u, ok := c.journal.(JournalUpgrader)
	if ok && slices.Contains(c.ident.owned, held.Scope) {
		return c.moveScope(ctx, u, held.Scope)
	}
	le := &LegacyScopeError{Scope: held.Scope, Own: c.scope, Reference: held.Reference}
	if ok {
		counts, err := u.Scopes(ctx, held.Scope)
		if err != nil {
			return journalErr(ctx, fmt.Errorf("journal scopes: %w", err))
		}
		for _, n := range counts {
			le.Pending, le.Settled = n.Pending, n.Settled
		}
	}
	if le.Pending+le.Settled == 0 {
		le.Pending, le.Settled = 1, 0
		if held.Settled() {
			le.Pending, le.Settled = 0, 1
		}
	}
	return le
}

// placementKind is the kind of a placeScopes error.
func placementKind(err error) error {
	for _, k := range []error{ErrInvalidConfig, ErrJournalLeased, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, k) {
			return k
		}
	}
	return ErrJournal
}

// journalErr marks a journal failure before anything was sent: the
// context's error when it ended, else ErrJournal.
func journalErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return fmt.Errorf("%w: %w", ErrJournal, err)
}

// scopeOf is corekit.ScopeOf, its error an ErrInvalidConfig.
func scopeOf(identity, baseURL string) (string, error) {
	s, err := corekit.ScopeOf(identity, baseURL)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return s, nil
}
