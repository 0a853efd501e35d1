package journal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// The golden journals in testdata/journals were written by earlier
// payonce versions (testdata/journals/README.md says how) with these
// credentials and base URLs.
const (
	goldenA55ClientID   = "golden-a55-client"
	goldenA55Secret     = "golden-a55-secret-0123456789"
	goldenCoinepayKey   = "golden-coinepay-key"
	goldenCoinepaySec   = "golden-coinepay-secret-0123456789"
	goldenCoinepayURL   = "https://openapi.coinepay.example"
	goldenSchemaInDumps = "payonce_golden"
)

// golden is one golden journal: the version that wrote it and what that
// version's rows mean.
type golden struct {
	commit    string
	schema    int  // the schema version of the SQLite file
	pgSchema  int  // the schema version of the PostgreSQL dump, 0 for none
	oldScopes bool // scopes before they named the origin (and the keyed Coinepay digest)
	plainFP   bool // fingerprints before they were keyed: plain SHA-256
	summary   bool // entries hold a request summary
}

var goldens = []golden{
	{commit: "35fbbca", schema: 1, pgSchema: 1, oldScopes: true, plainFP: true},
	{commit: "ff60ad4", schema: 1, pgSchema: 1, plainFP: true},
	{commit: "0c0d2de", schema: 2, pgSchema: 2, oldScopes: true, plainFP: true},
	{commit: "6668480", schema: 2, pgSchema: 2},
	{commit: "e3810c6", schema: 3, pgSchema: 3, summary: true},
	{commit: "fbcd98a", schema: 4, summary: true},
	{commit: "a0e267d", schema: 4, pgSchema: 3, summary: true},
}

// The golden requests: the same as the generator's.
func goldenCharge(card, amount, desc string) *a55.ChargeCreateRequest {
	return &a55.ChargeCreateRequest{Amount: payoncetest.Amount(amount), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, Description: desc,
		Card: &payonce.Card{Number: payonce.CardNumber(card), HolderName: "GOLDEN TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "123"}}
}

var (
	goldenOrder1 = goldenCharge(a55test.TestCard(0), "100.00", "golden order-1")     // succeeded
	goldenOrder2 = goldenCharge(a55test.TestCard(1), "250.00", "golden order-2")     // in doubt: executed, answer lost
	goldenOrder3 = goldenCharge(a55test.TestCard(2), "75.00", "golden order-3")      // declined
	goldenOrder4 = goldenCharge(a55test.TestCard(4), "42.00", "golden order-4")      // new, after the upgrade
	goldenJob1   = &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"} // issued
	goldenJob2   = &coinepay.ApplyRequest{HeaderID: "hdr_2", PackageID: "pkg_basic"} // in doubt: issued, answer lost
	goldenJob3   = &coinepay.ApplyRequest{HeaderID: "hdr_3", PackageID: "pkg_basic"} // new, after the upgrade
)

// Golden references and the scopes of today's clients.
const (
	refOrder1, refOrder2, refOrder3, refOrder4 = "order-1/attempt-1", "order-2/attempt-1", "order-3/attempt-1", "order-4/attempt-1"
	refJob1, refJob2, refJob3                  = "job-1/apply", "job-2/apply", "job-3/apply"
	goldenA55Scope                             = "a55:" + goldenA55ClientID + "@" + a55.SandboxURL
	goldenA55OldScope                          = "a55:" + goldenA55ClientID
)

func goldenCoinepayScope(t *testing.T) string {
	t.Helper()
	s, err := coinepay.Scope(goldenCoinepayKey, goldenCoinepaySec, goldenCoinepayURL)
	require.NoError(t, err)
	return s
}

// goldenCoinepayOldScope is the scope of a Coinepay client before scopes
// named the origin: a plain digest of the API key.
func goldenCoinepayOldScope() string {
	sum := sha256.Sum256([]byte(goldenCoinepayKey))
	return "coinepay:" + hex.EncodeToString(sum[:8])
}

func (g golden) scopes(t *testing.T) (a55Scope, coinepayScope string) {
	if g.oldScopes {
		return goldenA55OldScope, goldenCoinepayOldScope()
	}
	return goldenA55Scope, goldenCoinepayScope(t)
}

// goldenBackend opens a copy of a golden journal with today's code.
type goldenBackend struct {
	name string
	open func(t *testing.T, g golden) journal.Store // nil when g has no file for it
	// ownClock: the journal dates with its own clock (PostgreSQL's now()),
	// so a golden key is past its window whatever the client's clock.
	ownClock bool
}

func goldenBackends(t *testing.T) []goldenBackend {
	bs := []goldenBackend{{name: "sqlite", open: openGoldenSQLite}}
	if url := os.Getenv("PAYONCE_POSTGRES_URL"); url != "" {
		bs = append(bs, goldenBackend{name: "postgres", ownClock: true, open: func(t *testing.T, g golden) journal.Store {
			return openGoldenPostgres(t, url, g)
		}})
	} else {
		t.Log("PAYONCE_POSTGRES_URL is not set: the golden PostgreSQL dumps are not loaded")
	}
	return bs
}

// goldenPath is the file of g for a backend: <commit>-v<n>.sqlite or .pg.sql.
func goldenPath(g golden, pg bool) string {
	if pg {
		return filepath.Join("..", "testdata", "journals", fmt.Sprintf("%s-v%d.pg.sql", g.commit, g.pgSchema))
	}
	return filepath.Join("..", "testdata", "journals", fmt.Sprintf("%s-v%d.sqlite", g.commit, g.schema))
}

func openGoldenSQLite(t *testing.T, g golden) journal.Store {
	t.Helper()
	src, err := os.Open(goldenPath(g, false))
	require.NoError(t, err)
	defer src.Close()
	path := filepath.Join(t.TempDir(), "golden.db")
	dst, err := os.Create(path)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// loadGoldenDump loads a golden pg_dump into a fresh schema and returns
// its name. psql's meta-commands (\restrict) are left out.
func loadGoldenDump(t *testing.T, url, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	schema := fmt.Sprintf("payonce_golden_%d", time.Now().UnixNano())
	var sql strings.Builder
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, `\`) {
			continue
		}
		sql.WriteString(strings.ReplaceAll(line, goldenSchemaInDumps, schema))
	}
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = c.Close(context.Background())
		}
	})
	_, err = conn.Exec(t.Context(), sql.String())
	require.NoError(t, err)
	return schema
}

func openGoldenPostgres(t *testing.T, url string, g golden) journal.Store {
	t.Helper()
	if g.pgSchema == 0 {
		return nil
	}
	schema := loadGoldenDump(t, url, goldenPath(g, true))
	j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
	require.NoError(t, err)
	t.Cleanup(j.Close)
	return j
}

// toFake sends every request to a fake's listener whatever its URL, so
// that today's clients have the providers' base URLs, and so the golden
// scopes.
type toFake struct{ host string }

func (f toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = "http", f.host, f.host
	return http.DefaultTransport.RoundTrip(r)
}

func fakeHTTPClient(t *testing.T, rawURL string) *http.Client {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return &http.Client{Transport: toFake{u.Host}}
}

// goldenWorld is a golden journal opened with today's code, today's fakes
// holding what the providers did when it was written, and the entries as
// the golden held them.
type goldenWorld struct {
	g       golden
	j       journal.Store
	clk     *payoncetest.Clock
	a55     *a55test.Server
	cp      *coinepaytest.Server
	entries map[string]payonce.JournalEntry // by reference, as written
	a55Ops  int                             // executions the A55 fake holds before today's code runs
	cpOps   int
}

// newGoldenWorld opens g with b and plants in today's fakes what the
// providers executed when g was written: each entry's operation under its
// key (order-1, order-2 and job-1, job-2 ran; order-3 was declined), sent
// once with that key, as the provider would remember it.
func newGoldenWorld(t *testing.T, b goldenBackend, g golden) *goldenWorld {
	t.Helper()
	j := b.open(t, g)
	if j == nil {
		return nil
	}
	w := &goldenWorld{g: g, j: j, entries: map[string]payonce.JournalEntry{}}
	a55Scope, cpScope := g.scopes(t)
	for _, ref := range []string{refOrder1, refOrder2, refOrder3} {
		e, err := j.Get(t.Context(), a55Scope, ref)
		require.NoError(t, err, ref)
		w.entries[ref] = e
	}
	for _, ref := range []string{refJob1, refJob2} {
		e, err := j.Get(t.Context(), cpScope, ref)
		require.NoError(t, err, ref)
		w.entries[ref] = e
	}
	w.clk = payoncetest.NewFixedClock(w.entries[refOrder1].KeyCreated)
	w.a55 = a55test.New(t, a55test.WithCredentials(goldenA55ClientID, goldenA55Secret), payoncetest.WithClock(w.clk))
	w.cp = coinepaytest.New(t, coinepaytest.WithCredentials(goldenCoinepayKey, goldenCoinepaySec), payoncetest.WithClock(w.clk))

	plainA55, err := w.a55.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	for ref, req := range map[string]*a55.ChargeCreateRequest{refOrder1: goldenOrder1, refOrder2: goldenOrder2, refOrder3: goldenOrder3} {
		e := w.entries[ref]
		w.clk.Set(e.KeyCreated.Add(time.Second))
		_, err := plainA55.Charges.Create(t.Context(), req, payonce.WithKey(e.IdempotencyKey()))
		if ref == refOrder3 {
			require.ErrorIs(t, err, a55.ErrCardDeclined)
		} else {
			require.NoError(t, err, ref)
		}
	}
	plainCP, err := w.cp.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	for ref, req := range map[string]*coinepay.ApplyRequest{refJob1: goldenJob1, refJob2: goldenJob2} {
		e := w.entries[ref]
		w.clk.Set(e.KeyCreated.Add(time.Second))
		_, err := plainCP.Cards.Apply(t.Context(), req, payonce.WithKey(e.IdempotencyKey()))
		require.NoError(t, err, ref)
	}
	w.a55Ops, w.cpOps = w.a55.Ledger().Len(), w.cp.Ledger().Len()
	w.clk.Set(w.entries[refJob2].KeyCreated.Add(time.Hour)) // inside every key's window
	return w
}

// pastWindow reports whether the golden's in-doubt keys are past their
// window for today's clients. With the client's clock (SQLite) that is
// the test's choice (the fake clock); with a journal's own clock
// (PostgreSQL's now()) it is that clock's, and a golden written with it
// (schema 2 on) has keys of the day it was made: resumable for a day,
// then in doubt. Within a minute of that edge the test cannot tell, and
// skips.
func (w *goldenWorld) pastWindow(t *testing.T, b goldenBackend) bool {
	t.Helper()
	limit := 24*time.Hour - payoncetest.FastRetryPolicy().KeySafetyMargin
	now := w.clk.Now()
	if b.ownClock {
		var err error
		now, err = w.j.Now(t.Context())
		require.NoError(t, err)
	}
	young, old := now.Sub(w.entries[refJob2].KeyCreated), now.Sub(w.entries[refOrder2].KeyCreated)
	if old > limit-time.Minute && young < limit+time.Minute {
		t.Skipf("the golden's keys are %v to %v old, at the edge of their window", young, old)
	}
	return young >= limit
}

// a55Client is today's A55 client on the golden's journal and base URL.
func (w *goldenWorld) a55Client(t *testing.T, opts ...payonce.Option) (*a55.Client, error) {
	t.Helper()
	base := []payonce.Option{payonce.WithBaseURL(a55.SandboxURL), payonce.WithHTTPClient(fakeHTTPClient(t, w.a55.URL)),
		payonce.WithJournal(w.j), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy())}
	return w.a55.Client(append(base, opts...)...)
}

// coinepayClient is today's Coinepay client on the golden's journal and base URL.
func (w *goldenWorld) coinepayClient(t *testing.T, opts ...payonce.Option) (*coinepay.Client, error) {
	t.Helper()
	base := []payonce.Option{payonce.WithBaseURL(goldenCoinepayURL), payonce.WithHTTPClient(fakeHTTPClient(t, w.cp.URL)),
		payonce.WithJournal(w.j), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy())}
	return w.cp.Client(append(base, opts...)...)
}

// noSecondCharge asserts that every golden operation executed once at
// its provider, and that the providers executed nothing but newOps more.
func (w *goldenWorld) noSecondCharge(t *testing.T, newA55, newCP int) {
	t.Helper()
	for _, ref := range []string{refOrder1, refOrder2} {
		assert.Equal(t, 1, w.a55.Ledger().Count(w.entries[ref].Key), "%s charged once", ref)
	}
	for _, ref := range []string{refJob1, refJob2} {
		assert.Equal(t, 1, w.cp.Ledger().Count(w.entries[ref].Key), "%s issued once", ref)
	}
	assert.Equal(t, w.a55Ops+newA55, w.a55.Ledger().Len(), "A55 executions: %s", w.a55.Ledger())
	assert.Equal(t, w.cpOps+newCP, w.cp.Ledger().Len(), "Coinepay executions: %s", w.cp.Ledger())
}

// chargeUUIDOf is the charge_uuid of a recorded A55 answer.
func chargeUUIDOf(t *testing.T, result []byte) string {
	t.Helper()
	var ch struct {
		UUID string `json:"charge_uuid"`
	}
	require.NoError(t, json.Unmarshal(result, &ch))
	require.NotEmpty(t, ch.UUID)
	return ch.UUID
}

// cardIDOf is the card_id of a recorded Coinepay answer.
func cardIDOf(t *testing.T, result []byte) string {
	t.Helper()
	var env struct {
		Data struct {
			CardID string `json:"card_id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(result, &env))
	require.NotEmpty(t, env.Data.CardID)
	return env.Data.CardID
}

// forEachGolden runs f on every golden journal on every backend.
func forEachGolden(t *testing.T, keep func(golden) bool, f func(t *testing.T, w *goldenWorld, b goldenBackend)) {
	for _, b := range goldenBackends(t) {
		for _, g := range goldens {
			if keep != nil && !keep(g) {
				continue
			}
			t.Run(b.name+"/"+g.commit, func(t *testing.T) {
				w := newGoldenWorld(t, b, g)
				if w == nil {
					t.Skipf("no %s golden of %s", b.name, g.commit)
				}
				f(t, w, b)
			})
		}
	}
}

// A journal written before scopes named the origin, opened by today's
// client as it is: its references are not found under today's scope, so
// the client must refuse, naming the command that maps them, rather than
// charge each order again.
func TestGoldenJournalWithOldScopesIsRefusedNotChargedAgain(t *testing.T) {
	forEachGolden(t, func(g golden) bool { return g.oldScopes }, func(t *testing.T, w *goldenWorld, _ goldenBackend) {
		ac, err := w.a55Client(t)
		require.NoError(t, err)
		_, err = ac.Charges.Create(t.Context(), goldenOrder1, payonce.WithReference(refOrder1))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)
		assert.Contains(t, err.Error(), "payonce journal scopes")
		_, err = ac.Charges.Create(t.Context(), goldenOrder2, payonce.WithReference(refOrder2))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)

		cc, err := w.coinepayClient(t)
		require.NoError(t, err)
		_, err = cc.Cards.Apply(t.Context(), goldenJob1, payonce.WithReference(refJob1))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)
		w.noSecondCharge(t, 0, 0)
	})
}

// The old scope given by hand (payonce.WithScope) finds the entries; their
// plain fingerprints must be recognised, not read as another payload.
func TestGoldenJournalUnderItsOldScopeAnswersFromTheJournal(t *testing.T) {
	forEachGolden(t, func(g golden) bool { return g.oldScopes }, func(t *testing.T, w *goldenWorld, _ goldenBackend) {
		a55Scope, cpScope := w.g.scopes(t)
		ac, err := w.a55Client(t, payonce.WithScope(a55Scope))
		require.NoError(t, err)
		ch, err := ac.Charges.Create(t.Context(), goldenOrder1, payonce.WithReference(refOrder1))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		assert.Equal(t, chargeUUIDOf(t, w.entries[refOrder1].Result), ch.UUID)

		cc, err := w.coinepayClient(t, payonce.WithScope(cpScope))
		require.NoError(t, err)
		card, err := cc.Cards.Apply(t.Context(), goldenJob1, payonce.WithReference(refJob1))
		require.NoError(t, err)
		assert.Equal(t, cardIDOf(t, w.entries[refJob1].Result), card.CardID)
		w.noSecondCharge(t, 0, 0)
	})
}

// upgradeOptions are today's clients' options for g: the old scopes
// mapped when g has them.
func (w *goldenWorld) upgradeOptions(t *testing.T) (a55Opts, cpOpts []payonce.Option) {
	if !w.g.oldScopes {
		return nil, nil
	}
	a55Scope, cpScope := w.g.scopes(t)
	return []payonce.Option{payonce.WithLegacyScopes(a55Scope)}, []payonce.Option{payonce.WithLegacyScopes(cpScope)}
}

// assertNoPlainFingerprint asserts that no entry of the golden holds a
// plain fingerprint once today's client has verified it.
func (w *goldenWorld) current(t *testing.T, ref string) payonce.JournalEntry {
	t.Helper()
	scope := goldenA55Scope
	if strings.HasPrefix(ref, "job-") {
		scope = goldenCoinepayScope(t)
	}
	e, err := w.j.Get(t.Context(), scope, ref)
	require.NoError(t, err, ref)
	return e
}

// keepsItsMeaning asserts that today's entry of ref is the golden's: the
// same operation under the same key, and the same outcome when it was
// settled; its fingerprint is in a keyed form.
func (w *goldenWorld) keepsItsMeaning(t *testing.T, ref string) payonce.JournalEntry {
	t.Helper()
	was, now := w.entries[ref], w.current(t, ref)
	assert.Equal(t, was.Operation, now.Operation, ref)
	assert.Equal(t, was.Key, now.Key, ref)
	assert.True(t, was.KeyCreated.Equal(now.KeyCreated), ref)
	assert.Equal(t, was.Summary, now.Summary, ref)
	if was.Settled() {
		assert.Equal(t, was.State, now.State, ref)
		assert.Equal(t, was.ErrorKind, now.ErrorKind, ref)
		assert.Equal(t, string(was.Result), string(now.Result), ref)
	}
	assert.True(t, strings.HasPrefix(now.Fingerprint, "hmac-sha256:"), "%s: the fingerprint is keyed once verified: %s", ref, now.Fingerprint)
	return now
}

// Every golden journal opened by today's code: what succeeded is answered
// from the journal, the declined charge stays declined, what was in doubt
// is resumed with its key (answered by the provider's replay) or, past its
// key's window, refused as in doubt; a new order runs once. Nothing is
// charged twice.
func TestGoldenJournalUpgradesKeepEveryEntrysMeaning(t *testing.T) {
	forEachGolden(t, nil, func(t *testing.T, w *goldenWorld, b goldenBackend) {
		a55Opts, cpOpts := w.upgradeOptions(t)
		ac, err := w.a55Client(t, a55Opts...)
		require.NoError(t, err)
		cc, err := w.coinepayClient(t, cpOpts...)
		require.NoError(t, err)

		ch, err := ac.Charges.Create(t.Context(), goldenOrder1, payonce.WithReference(refOrder1))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		assert.Equal(t, chargeUUIDOf(t, w.entries[refOrder1].Result), ch.UUID)
		w.keepsItsMeaning(t, refOrder1)

		_, err = ac.Charges.Create(t.Context(), goldenOrder3, payonce.WithReference(refOrder3))
		require.ErrorIs(t, err, a55.ErrCardDeclined)
		var ae *payonce.APIError
		require.ErrorAs(t, err, &ae)
		assert.True(t, ae.FromJournal)
		w.keepsItsMeaning(t, refOrder3)

		card, err := cc.Cards.Apply(t.Context(), goldenJob1, payonce.WithReference(refJob1))
		require.NoError(t, err)
		assert.True(t, card.Meta.FromJournal)
		assert.Equal(t, cardIDOf(t, w.entries[refJob1].Result), card.CardID)
		w.keepsItsMeaning(t, refJob1)

		past := w.pastWindow(t, b)
		ch, err = ac.Charges.Create(t.Context(), goldenOrder2, payonce.WithReference(refOrder2))
		card, cerr := cc.Cards.Apply(t.Context(), goldenJob2, payonce.WithReference(refJob2))
		if past {
			// The journal's own clock (PostgreSQL's) says the golden
			// keys are past their window: in doubt, nothing sent
			// (TestGoldenJournalInDoubtIsSettledByLookup settles them).
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			require.ErrorIs(t, cerr, payonce.ErrOutcomeUnknown)
		} else {
			require.NoError(t, err)
			assert.Equal(t, w.entries[refOrder2].Key, ch.Meta.Key.String(), "resumed with its key")
			require.NoError(t, cerr)
			assert.Equal(t, w.entries[refJob2].Key, card.Meta.Key.String())
			assert.Equal(t, payonce.JournalSucceeded, w.keepsItsMeaning(t, refJob2).State)
		}
		w.keepsItsMeaning(t, refOrder2)

		_, err = ac.Charges.Create(t.Context(), goldenOrder4, payonce.WithReference(refOrder4))
		require.NoError(t, err)
		_, err = cc.Cards.Apply(t.Context(), goldenJob3, payonce.WithReference(refJob3))
		require.NoError(t, err)
		w.noSecondCharge(t, 1, 1)
	})
}

// An entry in doubt past its key's window is settled by looking it up at
// the provider, never sent again: an A55 charge by its summary, or, for
// an entry written before summaries, by the request, whose plain
// fingerprint is verified in its old form; a Coinepay card by the request.
func TestGoldenJournalInDoubtIsSettledByLookup(t *testing.T) {
	forEachGolden(t, nil, func(t *testing.T, w *goldenWorld, b goldenBackend) {
		a55Opts, cpOpts := w.upgradeOptions(t)
		w.clk.Set(w.entries[refJob2].KeyCreated.Add(25 * time.Hour))
		ac, err := w.a55Client(t, a55Opts...)
		require.NoError(t, err)
		cc, err := w.coinepayClient(t, cpOpts...)
		require.NoError(t, err)

		if w.pastWindow(t, b) {
			_, err = ac.Charges.Create(t.Context(), goldenOrder2, payonce.WithReference(refOrder2))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown, "in doubt, never sent again")
		}
		opts := &a55.SettleOptions{}
		if !w.g.summary {
			_, err := ac.Charges.SettleCreate(t.Context(), refOrder2, opts)
			require.ErrorIs(t, err, payonce.ErrInvalidRequest, "no summary to match by: the request is needed")
			opts.Request = goldenOrder2
		}
		s, err := ac.Charges.SettleCreate(t.Context(), refOrder2, opts)
		require.NoError(t, err)
		assert.True(t, s.Recorded)
		assert.Equal(t, payonce.JournalSucceeded, s.Entry.State)
		ch, err := ac.Charges.Create(t.Context(), goldenOrder2, payonce.WithReference(refOrder2))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		assert.Equal(t, s.Charge.UUID, ch.UUID)
		w.keepsItsMeaning(t, refOrder2)

		cs, err := cc.Cards.SettleApply(t.Context(), refJob2, goldenJob2, nil)
		require.NoError(t, err)
		assert.True(t, cs.Recorded)
		card, err := cc.Cards.Apply(t.Context(), goldenJob2, payonce.WithReference(refJob2))
		require.NoError(t, err)
		assert.True(t, card.Meta.FromJournal)
		assert.Equal(t, cs.Card.CardID, card.CardID)
		w.keepsItsMeaning(t, refJob2)
		w.noSecondCharge(t, 0, 0)
	})
}
