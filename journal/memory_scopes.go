package journal

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// Memory carries entries an earlier payonce wrote into today's forms.
var _ payonce.JournalUpgrader = (*Memory)(nil)

// Scopes counts the entries of every scope, or of only those given.
func (m *Memory) Scopes(ctx context.Context, only ...string) ([]payonce.ScopeCount, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	counts := map[string]*payonce.ScopeCount{}
	for id, e := range m.entries {
		if len(only) > 0 && !slices.Contains(only, id.scope) {
			continue
		}
		n := counts[id.scope]
		if n == nil {
			n = &payonce.ScopeCount{Scope: id.scope}
			counts[id.scope] = n
		}
		if e.State == payonce.JournalPending {
			n.Pending++
		} else {
			n.Settled++
		}
	}
	out := make([]payonce.ScopeCount, 0, len(counts))
	for _, n := range counts {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b payonce.ScopeCount) int { return strings.Compare(a.Scope, b.Scope) })
	return out, nil
}

// MoveScope moves every entry of from into to, or none. An entry of to
// never sent gives way to from's entry of its reference
// (GiveWayRefusal).
func (m *Memory) MoveScope(ctx context.Context, from, to string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := CheckMoveScope(from, to); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := StoredTime(m.now())
	var refs []string
	for id, e := range m.entries {
		if id.scope != from {
			continue
		}
		if d, ok := m.entries[entryID{to, id.reference}]; ok {
			if err := GiveWayRefusal(*d, now, from, to); err != nil {
				return 0, err
			}
		}
		if e.State == payonce.JournalPending && e.LeaseOwner != "" && e.LeaseUntil.After(now) {
			return 0, LeasedError(from, id.reference)
		}
		refs = append(refs, id.reference)
	}
	for _, ref := range refs {
		e := m.entries[entryID{from, ref}]
		delete(m.entries, entryID{from, ref})
		if d, ok := m.entries[entryID{to, ref}]; ok {
			e.Fence = MovedFence(e.Fence, d.Fence)
		}
		e.Scope = to
		m.entries[entryID{to, ref}] = e
	}
	return int64(len(refs)), nil
}

// ReplaceFingerprint sets the fingerprint of (scope, reference) to fp when
// it is old.
func (m *Memory) ReplaceFingerprint(ctx context.Context, scope, reference, old, fp string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := CheckReplaceFingerprint(old, fp); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[entryID{scope, reference}]
	if !ok {
		return false, fmt.Errorf("journal: replace fingerprint %q: %w", reference, ErrNotFound)
	}
	if !corekit.SameFingerprint(e.Fingerprint, old) {
		return false, nil
	}
	e.Fingerprint = fp
	return true, nil
}
