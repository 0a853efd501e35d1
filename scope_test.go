package payonce_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
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
		payonce.WithTestScopeIdentity("shop:1"))
	require.NoError(t, err)
	assert.Equal(t, "shop:1@https://api.example", c.Scope())

	c, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"))
	require.NoError(t, err, "no journal, no scope needed")
	assert.Empty(t, c.Scope())
}

// ScopeOf joins identity and origin; what cannot be a scope is refused.
func TestScopeOf(t *testing.T) {
	s, err := payonce.ScopeOf("p:id", "HTTPS://Host.Example:443/x/y")
	require.NoError(t, err)
	assert.Equal(t, "p:id@https://host.example", s)
	s, err = payonce.ScopeOf("p:id", "http://host.example:8080")
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
		_, err := payonce.ScopeOf(tc[0], tc[1])
		assert.ErrorIs(t, err, payonce.ErrInvalidConfig, name)
	}
	_, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithTestScopeIdentity(strings.Repeat("x", 250)))
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
	c := journalClient(t, s, j, newClock(), payonce.WithTestLegacyScopes("a55:client-1-old"))
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
	c := journalClient(t, s, j, newClock(), payonce.WithTestLegacyScopes("a55:client-1-old"), payonce.WithLegacyScopes("shop-42/a55"))
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
	_, err = journalClient(t, s, j, newClock(), payonce.WithTestLegacyScopes("a55:client-1-old")).
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

// coinepayOldScope is the scope an earlier payonce gave srv's API key:
// "coinepay:" and the first 16 hex digits of the key's SHA-256.
func coinepayOldScope(srv *coinepaytest.Server) string {
	sum := sha256.Sum256([]byte(srv.APIKey()))
	return coinepay.ProviderName + ":" + hex.EncodeToString(sum[:8])
}

// oneAttempt is a retry policy of one attempt.
func oneAttempt() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.MaxAttempts = 1
	return p
}

// A rolling deploy across the scope change: workers of the earlier
// version, which record under "coinepay:<SHA-256 prefix of the API key>",
// still run while today's start. Today's client maps the old scope
// (WithLegacyScopes) and moves its entries at its first journal use.
// Then an earlier worker reserves job 9 under the old scope and sends,
// and its answer is lost; the queue redelivers job 9 to today's worker,
// which finds nothing under its own scope. It must not send the
// reference an earlier scope holds under a new key (two cards for one
// job): it resumes it with its key.
func TestRollingDeployAcrossTheScopeChangeIssuesOnce(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	old := coinepayOldScope(srv)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}

	earlier, err := srv.Client(payonce.WithJournal(j), payonce.WithScope(old))
	require.NoError(t, err)
	_, err = earlier.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err)

	today, err := srv.Client(payonce.WithJournal(j), payonce.WithLegacyScopes(old))
	require.NoError(t, err)
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err, "moved at first use, answered from the journal")
	require.Equal(t, 1, srv.Ledger().CountKind("card.apply"))

	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = earlier.Cards.Apply(ctx, req, payonce.WithReference("job-9/apply"), payonce.WithCallRetryPolicy(oneAttempt()))
	require.Error(t, err, "the earlier worker's answer is lost")
	require.Equal(t, 2, srv.Ledger().CountKind("card.apply"))

	_, _ = today.Cards.Apply(ctx, req, payonce.WithReference("job-9/apply"))
	assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "job 9 issued once")
}

// reserveHook is a memory journal that runs hook once, right after it
// created the entry (scope, ref): what another process does between a
// run's reservation and that run's next step.
type reserveHook struct {
	*journal.Memory
	scope, ref string
	once       sync.Once
	hook       func()
}

func (j *reserveHook) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	got, created, err := j.Memory.Reserve(ctx, e)
	if created && e.Scope == j.scope && e.Reference == j.ref {
		j.once.Do(j.hook)
	}
	return got, created, err
}

// An earlier worker that reserves the reference between today's
// reservation and its check of the earlier scopes (and sends, and loses
// its answer) is found by that check: today's run takes back its
// reservation, nothing sent, moves the earlier entry in (the client owns
// that scope) and resumes it with the earlier worker's key. One card.
func TestAnEarlierWorkerReservingDuringTheReservationIsResumedByItsKey(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	mem := journal.NewMemory()
	old := coinepayOldScope(srv)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	earlier, err := srv.Client(payonce.WithJournal(mem), payonce.WithScope(old))
	require.NoError(t, err)
	j := &reserveHook{Memory: mem, ref: "job-7/apply"}
	today, err := srv.Client(payonce.WithJournal(j), payonce.WithLegacyScopes(old))
	require.NoError(t, err)
	j.scope = today.Core().Scope()
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err, "the first use: nothing to move")

	j.hook = func() {
		require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
		_, err := earlier.Cards.Apply(ctx, req, payonce.WithReference("job-7/apply"), payonce.WithCallRetryPolicy(oneAttempt()))
		assert.Error(t, err, "the earlier worker's answer is lost")
	}
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-7/apply"))
	require.NoError(t, err)
	assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "job 1 and job 7, each issued once")
	got, err := mem.Get(ctx, today.Core().Scope(), "job-7/apply")
	require.NoError(t, err)
	assert.Len(t, srv.Ledger().ByKey(got.Key), 1, "the entry holds the earlier worker's key, which issued the card")
	assert.Equal(t, payonce.JournalSucceeded, got.State)
	_, err = mem.Get(ctx, old, "job-7/apply")
	require.ErrorIs(t, err, journal.ErrNotFound, "moved")
}

// An earlier worker holding the reference (reserved, its byte maybe on
// its way) when today's run checks stops that run before any byte: the
// move would take an entry a live run holds, so the call is refused as
// leased, temporary. Once that run ended, the next call resumes the
// earlier entry with its key.
func TestAnEarlierWorkerHoldingTheReferenceStopsTheNewReservation(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	mem := journal.NewMemory()
	old := coinepayOldScope(srv)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	j := &reserveHook{Memory: mem, ref: "job-8/apply"}
	today, err := srv.Client(payonce.WithJournal(j), payonce.WithLegacyScopes(old))
	require.NoError(t, err)
	j.scope = today.Core().Scope()
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err)
	sent := len(srv.Requests())

	earlierKey := "earlier-worker-job-8"
	var held payonce.JournalEntry
	j.hook = func() {
		var err error
		held, _, err = mem.ReserveTx(ctx, payonce.JournalEntry{Scope: old, Reference: "job-8/apply", Operation: "cards.apply",
			Method: http.MethodPost, Path: coinepay.PathCardApply, Key: earlierKey, KeyCreated: srv.Clock().Now(),
			LeaseOwner: "earlier-worker", Lease: time.Hour, Sent: true, Attempts: 1})
		assert.NoError(t, err)
	}
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-8/apply"))
	require.ErrorIs(t, err, payonce.ErrJournalLeased)
	assert.Len(t, srv.Requests(), sent, "nothing sent")
	ours, err := mem.Get(ctx, today.Core().Scope(), "job-8/apply")
	require.NoError(t, err)
	assert.False(t, ours.Sent, "the reservation taken back: nothing was sent under it")
	assert.Zero(t, ours.Attempts)

	// The earlier worker's run ends without an answer.
	held.State, held.LastCause = payonce.JournalPending, "transport"
	require.NoError(t, mem.Update(ctx, held))
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-8/apply"))
	require.NoError(t, err)
	assert.Equal(t, 1, srv.Ledger().Count(earlierKey), "sent under the earlier worker's key")
	assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "job 1 and job 8, each issued once")
}

// A client that does not own the earlier scope (a typed client's earlier
// form, unmapped) refuses a new reservation whose reference that scope
// holds, naming the command that maps it; nothing sent. Its reservation,
// taken back, does not stand in the way of the move, after which the
// reference resumes with the earlier key.
func TestANewReservationHeldUnderAnUnmappedEarlierScopeIsRefused(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	old := coinepayOldScope(srv)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	earlier, err := srv.Client(payonce.WithJournal(j), payonce.WithScope(old))
	require.NoError(t, err)
	today, err := srv.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err, "the first use: the earlier scope is empty")

	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = earlier.Cards.Apply(ctx, req, payonce.WithReference("job-12/apply"), payonce.WithCallRetryPolicy(oneAttempt()))
	require.Error(t, err)
	sent := len(srv.Requests())

	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-12/apply"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	var le *payonce.LegacyScopeError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, payonce.LegacyScopeError{Scope: old, Own: today.Core().Scope(), Reference: "job-12/apply", Pending: 1}, *le)
	assert.Contains(t, err.Error(), "payonce journal scopes -journal <journal> -from")
	assert.Contains(t, err.Error(), `"job-12/apply"`)
	assert.False(t, payonce.KeyOf(err).IsZero(), "the error gives back the key")
	assert.Len(t, srv.Requests(), sent, "nothing sent")
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-12/apply"))
	require.ErrorAs(t, err, &le, "refused again")
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-13/apply"))
	require.NoError(t, err, "a reference the earlier scope does not hold runs")
	require.Equal(t, 3, srv.Ledger().CountKind("card.apply"))

	_, err = j.MoveScope(ctx, old, today.Core().Scope())
	require.NoError(t, err, "the entry taken back gives way to the earlier one")
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-12/apply"))
	require.NoError(t, err)
	assert.Equal(t, 3, srv.Ledger().CountKind("card.apply"), "job 12 issued once")
}

// What no check of today's client can stop: an earlier worker that
// reserves the reference after today's run checked runs it again (it
// never looks under today's scope). Today's next run of the reference
// finds it under both scopes and refuses, nothing sent: the operator
// settles each.
func TestAReferenceHeldUnderBothScopesIsRefused(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	old := coinepayOldScope(srv)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	earlier, err := srv.Client(payonce.WithJournal(j), payonce.WithScope(old))
	require.NoError(t, err)
	today, err := srv.Client(payonce.WithJournal(j), payonce.WithLegacyScopes(old))
	require.NoError(t, err)

	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 2}))
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-11/apply"), payonce.WithCallRetryPolicy(oneAttempt()))
	require.Error(t, err)
	_, err = earlier.Cards.Apply(ctx, req, payonce.WithReference("job-11/apply"), payonce.WithCallRetryPolicy(oneAttempt()))
	require.Error(t, err)
	require.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "the earlier worker could not see today's entry")
	sent := len(srv.Requests())

	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-11/apply"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	require.ErrorIs(t, err, journal.ErrScopeCollision)
	assert.Contains(t, err.Error(), `"job-11/apply"`)
	assert.Len(t, srv.Requests(), sent, "nothing sent")
}

// getCounter counts a journal's reads by scope.
type getCounter struct {
	*journal.Memory
	mu   sync.Mutex
	gets map[string]int
}

func (j *getCounter) Get(ctx context.Context, scope, ref string) (payonce.JournalEntry, error) {
	j.mu.Lock()
	j.gets[scope]++
	j.mu.Unlock()
	return j.Memory.Get(ctx, scope, ref)
}

// The check costs one primary-key read per earlier form of the scope and
// new reservation, and nothing for a reference answered from the
// journal; a client without earlier forms reads nothing.
func TestTheEarlierScopesAreReadOncePerNewReservation(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	j := &getCounter{Memory: journal.NewMemory(), gets: map[string]int{}}
	today, err := srv.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	for _, ref := range []string{"job-1/apply", "job-2/apply", "job-1/apply"} {
		_, err = today.Cards.Apply(ctx, req, payonce.WithReference(ref))
		require.NoError(t, err)
	}
	old := coinepayOldScope(srv)
	assert.Equal(t, map[string]int{old: 2, coinepay.ProviderName + ":" + srv.APIKey(): 2}, j.gets)

	s := newStub(t, okCharge)
	j.gets = map[string]int{}
	c := journalClient(t, s, j, newClock())
	_, err = c.Do(ctx, chargeReq("10.00"), nil, payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.Empty(t, j.gets)
}
