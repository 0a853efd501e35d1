package payonce_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A core client with a journal needs a scope: without one, its entries
// would meet those of every other client without one.
func TestJournalWithoutScopeIsRefused(t *testing.T) {
	_, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithJournal(journal.NewMemory()))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "WithScope")

	_, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithJournal(journal.NewMemory()), payonce.WithScope(""))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "an empty scope is no scope")

	c, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithJournal(journal.NewMemory()),
		corekit.WithScopeIdentity("shop:1"))
	require.NoError(t, err)
	assert.Equal(t, "shop:1@https://api.example", c.Scope())

	c, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"))
	require.NoError(t, err, "no journal, no scope needed")
	assert.Empty(t, c.Scope())
}

// ScopeOf joins identity and origin; what cannot be a scope is refused.
func TestScopeOf(t *testing.T) {
	s, err := corekit.ScopeOf("p:id", "HTTPS://Host.Example:443/x/y")
	require.NoError(t, err)
	assert.Equal(t, "p:id@https://host.example", s)
	s, err = corekit.ScopeOf("p:id", "http://host.example:8080")
	require.NoError(t, err)
	assert.Equal(t, "p:id@http://host.example:8080", s)

	for name, tc := range map[string][2]string{
		"empty identity": {"", "https://a.example"},
		"too long":       {strings.Repeat("x", corekit.MaxReferenceLen), "https://a.example"},
		"control char":   {"p:\n", "https://a.example"},
		"relative URL":   {"p:id", "/api"},
		"user info":      {"p:id", "https://u:p@a.example"},
		"ftp":            {"p:id", "ftp://a.example"},
	} {
		_, err := corekit.ScopeOf(tc[0], tc[1])
		assert.ErrorIs(t, err, payonce.ErrInvalidConfig, name)
	}
	_, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"), corekit.WithScopeIdentity(strings.Repeat("x", 250)))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "identity and origin over 255 bytes")
}

// legacyJournal writes one succeeded entry, order-1/charge, under scope
// old, as an earlier payonce recording under it would have.
func legacyJournal(t *testing.T, s *stub, old string) *journal.Memory {
	t.Helper()
	j := journal.NewMemory()
	_, err := journalClient(t, s, j, newClock(), payonce.WithScope(old)).Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	require.EqualValues(t, 1, s.calls.Load())
	return j
}

// Entries under a scope an earlier payonce gave the client's credential
// (corekit.WithLegacyScopes, set by the typed clients), unmapped, are
// refused at the first journal use, naming the command that maps them:
// the client would not find them and would run each reference again.
func TestEntriesUnderALegacyScopeAreRefusedNotRunAgain(t *testing.T) {
	s := newStub(t, okCharge)
	j := legacyJournal(t, s, "a55:client-1-old")
	c := journalClient(t, s, j, newClock(), corekit.WithLegacyScopes("a55:client-1-old"))
	for _, ref := range []string{"order-1/charge", "order-2/charge"} {
		_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference(ref))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig, ref)
		var le *payonce.LegacyScopeError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, payonce.LegacyScopeError{Scope: "a55:client-1-old", Own: "a55:client-1", Settled: 1}, *le)
		assert.Contains(t, err.Error(), "payonce journal scopes -journal <journal> -from \"a55:client-1-old\" -to \"a55:client-1\"")
		assert.False(t, payonce.KeyOf(err).IsZero(), "the error gives back the key")
	}
	_, err := c.Settle(t.Context(), "order-1/charge", payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "by hand"})
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "a settlement is refused too")
	assert.EqualValues(t, 1, s.calls.Load(), "nothing sent")

	// Once the operator has moved them, the same client finds them.
	_, err = j.MoveScope(t.Context(), "a55:client-1-old", "a55:client-1")
	require.NoError(t, err)
	m, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.True(t, m.FromJournal)
	assert.EqualValues(t, 1, s.calls.Load(), "charged once")
}

// scopeCounter counts the Scopes calls a client makes.
type scopeCounter struct {
	*journal.Memory
	calls atomic.Int32
}

func (j *scopeCounter) Scopes(ctx context.Context, only ...string) ([]payonce.ScopeCount, error) {
	j.calls.Add(1)
	return j.Memory.Scopes(ctx, only...)
}

// WithLegacyScopes names scopes the client owns: at its first journal use
// their entries move into the client's scope, so a reference recorded
// before is answered from the journal; the check is made once.
func TestWithLegacyScopesMovesTheEntriesOnce(t *testing.T) {
	s := newStub(t, okCharge)
	j := &scopeCounter{Memory: legacyJournal(t, s, "shop-42/a55")}
	c := journalClient(t, s, j, newClock(), corekit.WithLegacyScopes("a55:client-1-old"), payonce.WithLegacyScopes("shop-42/a55"))
	m, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.True(t, m.FromJournal)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-2/charge"))
	require.NoError(t, err)
	assert.EqualValues(t, 2, s.calls.Load(), "order-1 charged once, order-2 once")
	assert.EqualValues(t, 1, j.calls.Load(), "one check per client")
	counts, err := j.Scopes(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []payonce.ScopeCount{{Scope: "a55:client-1", Settled: 2}}, counts)
}

// A reference held under both scopes is refused, nothing moved: which
// entry is the operation's is the operator's call.
func TestWithLegacyScopesRefusesACollision(t *testing.T) {
	s := newStub(t, okCharge)
	j := legacyJournal(t, s, "shop-42/a55")
	_, err := journalClient(t, s, j, newClock()).Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	c := journalClient(t, s, j, newClock(), payonce.WithLegacyScopes("shop-42/a55"))
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-3/charge"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	require.ErrorIs(t, err, journal.ErrScopeCollision)
	assert.Contains(t, err.Error(), `"order-1/charge"`)
	counts, err := j.Scopes(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []payonce.ScopeCount{{Scope: "a55:client-1", Settled: 1}, {Scope: "shop-42/a55", Settled: 1}}, counts, "nothing moved")
	assert.EqualValues(t, 2, s.calls.Load())
}

// plainJournal is a payonce.Journal that is not a JournalUpgrader.
type plainJournal struct{ payonce.Journal }

// A journal that cannot move entries cannot honour WithLegacyScopes: the
// client refuses at its first use; without the option it runs as before,
// unable to check.
func TestWithLegacyScopesNeedsAJournalUpgrader(t *testing.T) {
	s := newStub(t, okCharge)
	j := plainJournal{journal.NewMemory()}
	_, err := journalClient(t, s, j, newClock(), payonce.WithLegacyScopes("shop-42/a55")).
		Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "JournalUpgrader")
	assert.Zero(t, s.calls.Load())
	_, err = journalClient(t, s, j, newClock(), corekit.WithLegacyScopes("a55:client-1-old")).
		Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
}

func TestWithLegacyScopesValidates(t *testing.T) {
	for name, opt := range map[string]payonce.Option{
		"empty":         payonce.WithLegacyScopes(""),
		"control":       payonce.WithLegacyScopes("a55:\x1b[31m"),
		"too long":      payonce.WithLegacyScopes(strings.Repeat("s", corekit.MaxReferenceLen+1)),
		"its own scope": payonce.WithLegacyScopes("a55:client-1"),
	} {
		_, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithScope("a55:client-1"),
			payonce.WithJournal(journal.NewMemory()), opt)
		require.ErrorIs(t, err, payonce.ErrInvalidConfig, name)
	}
}
