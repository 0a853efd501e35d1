package goldentest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
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

// The credentials and base URLs the golden journals were written with
// (testdata/journals/README.md).
const (
	A55ClientID       = "golden-a55-client"
	A55Secret         = "golden-a55-secret-0123456789"
	CoinepayKey       = "golden-coinepay-key"
	CoinepaySecret    = "golden-coinepay-secret-0123456789"
	CoinepayURL       = "https://openapi.coinepay.example"
	schemaInDumps     = "payonce_golden"
	A55Scope          = "a55:" + A55ClientID + "@" + a55.SandboxURL
	A55OldScope       = "a55:" + A55ClientID
	RefOrder1         = "order-1/attempt-1" // succeeded
	RefOrder2         = "order-2/attempt-1" // in doubt: executed, every answer lost
	RefOrder3         = "order-3/attempt-1" // declined
	RefOrder4         = "order-4/attempt-1" // new, after the upgrade
	RefJob1           = "job-1/apply"       // issued
	RefJob2           = "job-2/apply"       // in doubt: issued, every answer lost
	RefJob3           = "job-3/apply"       // new, after the upgrade
	keyWindowForTests = 24 * time.Hour
)

// Golden is one golden journal: the version that wrote it and what that
// version's rows mean.
type Golden struct {
	Commit    string
	Schema    int  // the schema version of the SQLite file
	PGSchema  int  // the schema version of the PostgreSQL dump, 0 for none
	OldScopes bool // scopes before they named the origin (and the keyed Coinepay digest)
	PlainFP   bool // fingerprints before they were keyed: plain SHA-256
	Summary   bool // entries hold a request summary
}

// Goldens are the golden journals, oldest first.
var Goldens = []Golden{
	{Commit: "35fbbca", Schema: 1, PGSchema: 1, OldScopes: true, PlainFP: true},
	{Commit: "ff60ad4", Schema: 1, PGSchema: 1, PlainFP: true},
	{Commit: "0c0d2de", Schema: 2, PGSchema: 2, OldScopes: true, PlainFP: true},
	{Commit: "6668480", Schema: 2, PGSchema: 2},
	{Commit: "e3810c6", Schema: 3, PGSchema: 3, Summary: true},
	{Commit: "fbcd98a", Schema: 4, Summary: true},
	{Commit: "a0e267d", Schema: 4, PGSchema: 3, Summary: true},
}

// charge is a golden charge in today's form: the generator's amount,
// currency, type, description and card, and the fields A55's reference
// requires besides (a55test.Complete's).
func charge(card, amount, desc string) *a55.ChargeCreateRequest {
	return a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount(amount), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, Description: desc,
		Card: &payonce.Card{Number: payonce.CardNumber(card), HolderName: "GOLDEN TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "123"}})
}

// The golden requests (the generator sent them in the idempotency guide's
// wire form, which the entries' fingerprints and summaries hold), and the
// new ones.
var (
	Order1 = charge(a55test.TestCard(0), "100.00", "golden order-1")
	Order2 = charge(a55test.TestCard(1), "250.00", "golden order-2")
	Order3 = charge(a55test.TestCard(2), "75.00", "golden order-3")
	Order4 = charge(a55test.TestCard(4), "42.00", "golden order-4")
	Job1   = &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	Job2   = &coinepay.ApplyRequest{HeaderID: "hdr_2", PackageID: "pkg_basic"}
	Job3   = &coinepay.ApplyRequest{HeaderID: "hdr_3", PackageID: "pkg_basic"}
)

// CoinepayScope is today's scope of the golden Coinepay credential.
func CoinepayScope(tb testing.TB) string {
	tb.Helper()
	s, err := coinepay.Scope(CoinepayKey, CoinepaySecret, CoinepayURL)
	require.NoError(tb, err)
	return s
}

// CoinepayOldScope is its scope before scopes named the origin: a plain
// digest of the API key.
func CoinepayOldScope() string {
	sum := sha256.Sum256([]byte(CoinepayKey))
	return "coinepay:" + hex.EncodeToString(sum[:8])
}

// Scopes are the scopes g's entries are under.
func (g Golden) Scopes(tb testing.TB) (a55Scope, coinepayScope string) {
	if g.OldScopes {
		return A55OldScope, CoinepayOldScope()
	}
	return A55Scope, CoinepayScope(tb)
}

// Path is the file of g: its SQLite journal, or its PostgreSQL dump.
func (g Golden) Path(pg bool) string {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "..", "testdata", "journals")
	if pg {
		return filepath.Join(dir, fmt.Sprintf("%s-v%d.pg.sql", g.Commit, g.PGSchema))
	}
	return filepath.Join(dir, fmt.Sprintf("%s-v%d.sqlite", g.Commit, g.Schema))
}

// CopySQLite copies g's SQLite journal into a temporary directory and
// returns the copy's path.
func CopySQLite(tb testing.TB, g Golden) string {
	tb.Helper()
	src, err := os.Open(g.Path(false))
	require.NoError(tb, err)
	defer src.Close()
	path := filepath.Join(tb.TempDir(), "golden.db")
	dst, err := os.Create(path)
	require.NoError(tb, err)
	_, err = io.Copy(dst, src)
	require.NoError(tb, err)
	require.NoError(tb, dst.Close())
	return path
}

// LoadDump loads g's PostgreSQL dump into a fresh schema, dropped when the
// test ends, and returns its name; psql's meta-commands (\restrict) are
// left out.
func LoadDump(tb testing.TB, dbURL string, g Golden) string {
	tb.Helper()
	raw, err := os.ReadFile(g.Path(true))
	require.NoError(tb, err)
	schema := fmt.Sprintf("payonce_golden_%d", time.Now().UnixNano())
	var sql strings.Builder
	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(line, `\`) {
			sql.WriteString(strings.ReplaceAll(line, schemaInDumps, schema))
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(tb, err)
	defer conn.Close(ctx)
	tb.Cleanup(func() {
		if c, err := pgx.Connect(ctx, dbURL); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = c.Close(ctx)
		}
	})
	_, err = conn.Exec(ctx, sql.String())
	require.NoError(tb, err)
	return schema
}

// Backend opens a copy of a golden journal with today's code.
type Backend struct {
	Name string
	// Open returns the journal and the payonce command's flags that open
	// the same one; nil when g has no file for the backend.
	Open func(t *testing.T, g Golden) (journal.Store, []string)
	// OwnClock: the journal dates with its own clock (PostgreSQL's now()).
	OwnClock bool
}

// Backends are SQLite, and PostgreSQL when PAYONCE_POSTGRES_URL is set.
func Backends(t *testing.T) []Backend {
	bs := []Backend{{Name: "sqlite", Open: func(t *testing.T, g Golden) (journal.Store, []string) {
		path := CopySQLite(t, g)
		j, err := sqlitejournal.Open(t.Context(), path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Close() })
		return j, []string{"-journal", path}
	}}}
	dbURL := os.Getenv("PAYONCE_POSTGRES_URL")
	if dbURL == "" {
		t.Log("PAYONCE_POSTGRES_URL is not set: the golden PostgreSQL dumps are not loaded")
		return bs
	}
	return append(bs, Backend{Name: "postgres", OwnClock: true, Open: func(t *testing.T, g Golden) (journal.Store, []string) {
		if g.PGSchema == 0 {
			return nil, nil
		}
		schema := LoadDump(t, dbURL, g)
		j, err := pgjournal.Open(t.Context(), dbURL, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(j.Close)
		return j, []string{"-journal", dbURL, "-schema", schema}
	}})
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

// HTTPClient sends every request to the fake listening at fakeURL.
func HTTPClient(tb testing.TB, fakeURL string) *http.Client {
	tb.Helper()
	u, err := url.Parse(fakeURL)
	require.NoError(tb, err)
	return &http.Client{Transport: toFake{u.Host}}
}

// World is a golden journal opened with today's code, today's fakes
// holding what the providers did when it was written, and the entries as
// the golden held them.
type World struct {
	G       Golden
	B       Backend
	J       journal.Store
	Flags   []string // the payonce command's flags opening J
	Clock   *payoncetest.Clock
	A55     *a55test.Server
	CP      *coinepaytest.Server
	Entries map[string]payonce.JournalEntry // by reference, as written
	a55Ops  int                             // executions the fakes held before today's code ran
	cpOps   int
}

// NewWorld opens g with b and plants in today's fakes what the providers
// executed when g was written: each entry's operation under its key
// (order-1, order-2, order-3 declined, job-1, job-2), sent once with that
// key, as the provider remembers it. It returns nil when b has no file of
// g. The fakes' clock is then an hour after the last golden key.
func NewWorld(t *testing.T, b Backend, g Golden) *World {
	t.Helper()
	j, flags := b.Open(t, g)
	if j == nil {
		return nil
	}
	w := &World{G: g, B: b, J: j, Flags: flags, Entries: map[string]payonce.JournalEntry{}}
	a55Scope, cpScope := g.Scopes(t)
	for _, ref := range []string{RefOrder1, RefOrder2, RefOrder3} {
		e, err := j.Get(t.Context(), a55Scope, ref)
		require.NoError(t, err, ref)
		w.Entries[ref] = e
	}
	for _, ref := range []string{RefJob1, RefJob2} {
		e, err := j.Get(t.Context(), cpScope, ref)
		require.NoError(t, err, ref)
		w.Entries[ref] = e
	}
	w.Clock = payoncetest.NewFixedClock(w.Entries[RefOrder1].KeyCreated)
	w.A55 = a55test.New(t, a55test.WithCredentials(A55ClientID, A55Secret), payoncetest.WithClock(w.Clock))
	w.CP = coinepaytest.New(t, coinepaytest.WithCredentials(CoinepayKey, CoinepaySecret), payoncetest.WithClock(w.Clock))

	plainA55, err := w.A55.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	for _, ref := range []string{RefOrder1, RefOrder2, RefOrder3} {
		e := w.Entries[ref]
		w.Clock.Set(e.KeyCreated.Add(time.Second))
		_, err := plainA55.Charges.Create(t.Context(), map[string]*a55.ChargeCreateRequest{RefOrder1: Order1, RefOrder2: Order2, RefOrder3: Order3}[ref],
			payonce.WithKey(e.IdempotencyKey()))
		if ref == RefOrder3 {
			require.ErrorIs(t, err, a55.ErrCardDeclined)
		} else {
			require.NoError(t, err, ref)
		}
	}
	plainCP, err := w.CP.Client(payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	for _, ref := range []string{RefJob1, RefJob2} {
		e := w.Entries[ref]
		w.Clock.Set(e.KeyCreated.Add(time.Second))
		_, err := plainCP.Cards.Apply(t.Context(), map[string]*coinepay.ApplyRequest{RefJob1: Job1, RefJob2: Job2}[ref], payonce.WithKey(e.IdempotencyKey()))
		require.NoError(t, err, ref)
	}
	w.a55Ops, w.cpOps = w.A55.Ledger().Len(), w.CP.Ledger().Len()
	w.Clock.Set(w.Entries[RefJob2].KeyCreated.Add(time.Hour))
	return w
}

// A55Client is today's A55 client on the golden's journal and base URL.
func (w *World) A55Client(t *testing.T, opts ...payonce.Option) (*a55.Client, error) {
	t.Helper()
	base := []payonce.Option{payonce.WithBaseURL(a55.SandboxURL), payonce.WithHTTPClient(HTTPClient(t, w.A55.URL)),
		payonce.WithJournal(w.J), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy())}
	return w.A55.Client(append(base, opts...)...)
}

// CoinepayClient is today's Coinepay client on the golden's journal and
// base URL.
func (w *World) CoinepayClient(t *testing.T, opts ...payonce.Option) (*coinepay.Client, error) {
	t.Helper()
	base := []payonce.Option{payonce.WithBaseURL(CoinepayURL), payonce.WithHTTPClient(HTTPClient(t, w.CP.URL)),
		payonce.WithJournal(w.J), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy())}
	return w.CP.Client(append(base, opts...)...)
}

// UpgradeOptions are today's clients' options for the golden: its old
// scopes mapped (payonce.WithLegacyScopes) when it has them.
func (w *World) UpgradeOptions(t *testing.T) (a55Opts, cpOpts []payonce.Option) {
	if !w.G.OldScopes {
		return nil, nil
	}
	a55Scope, cpScope := w.G.Scopes(t)
	return []payonce.Option{payonce.WithLegacyScopes(a55Scope)}, []payonce.Option{payonce.WithLegacyScopes(cpScope)}
}

// CommandHTTPClient sends the payonce command's requests to the fake of
// their provider: Coinepay's base URL to the Coinepay fake, every other
// URL (A55's, its token endpoint) to the A55 fake.
func (w *World) CommandHTTPClient(tb testing.TB) *http.Client {
	tb.Helper()
	a, c := HTTPClient(tb, w.A55.URL), HTTPClient(tb, w.CP.URL)
	cu, err := url.Parse(CoinepayURL)
	require.NoError(tb, err)
	return &http.Client{Transport: byHost{cu.Host: c.Transport, "": a.Transport}}
}

// byHost routes a request by its URL's host, "" for any other.
type byHost map[string]http.RoundTripper

func (m byHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if rt, ok := m[r.URL.Host]; ok {
		return rt.RoundTrip(r)
	}
	return m[""].RoundTrip(r)
}

// Env is the payonce command's environment for today's clients of the
// golden credentials, acting for the A55 fake's own wallet.
func (w *World) Env() map[string]string {
	return map[string]string{
		a55.EnvClientID: A55ClientID, a55.EnvClientSecret: A55Secret, a55.EnvTokenURL: w.A55.TokenURL(), "A55_BASE_URL": a55.SandboxURL,
		// The golden entries' summaries, of the guide's form, name no
		// wallet: a lookup lists the fake's, which the charges went to.
		"A55_WALLET_UUID":  w.A55.WalletUUID(),
		"COINEPAY_API_KEY": CoinepayKey, "COINEPAY_API_SECRET": CoinepaySecret, "COINEPAY_BASE_URL": CoinepayURL,
	}
}

// NoSecondCharge asserts that every golden operation executed once at its
// provider, and that the providers executed nothing but newA55 and newCP
// more.
func (w *World) NoSecondCharge(t *testing.T, newA55, newCP int) {
	t.Helper()
	for _, ref := range []string{RefOrder1, RefOrder2} {
		assert.Equal(t, 1, w.A55.Ledger().Count(w.Entries[ref].Key), "%s charged once", ref)
	}
	for _, ref := range []string{RefJob1, RefJob2} {
		assert.Equal(t, 1, w.CP.Ledger().Count(w.Entries[ref].Key), "%s issued once", ref)
	}
	assert.Equal(t, w.a55Ops+newA55, w.A55.Ledger().Len(), "A55 executions: %s", w.A55.Ledger())
	assert.Equal(t, w.cpOps+newCP, w.CP.Ledger().Len(), "Coinepay executions: %s", w.CP.Ledger())
}

// Current is today's entry of ref, under today's scope.
func (w *World) Current(t *testing.T, ref string) payonce.JournalEntry {
	t.Helper()
	scope := A55Scope
	if strings.HasPrefix(ref, "job-") {
		scope = CoinepayScope(t)
	}
	e, err := w.J.Get(t.Context(), scope, ref)
	require.NoError(t, err, ref)
	return e
}

// KeepsItsMeaning asserts that today's entry of ref is the golden's: the
// same operation under the same key and summary, and the same outcome
// when it was settled; its fingerprint keyed, as a client that verified
// it leaves it. It returns today's entry.
func (w *World) KeepsItsMeaning(t *testing.T, ref string) payonce.JournalEntry {
	t.Helper()
	was, now := w.Entries[ref], w.Current(t, ref)
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

// PastWindow reports whether the golden's in-doubt keys are past their
// window for today's clients. With the client's clock (SQLite) that is
// the fake clock's; with a journal's own clock (PostgreSQL's now()) it is
// that clock's, and a golden written with it (schema 2 on) has keys of
// the day it was made: resumable for a day, then in doubt. Within a
// minute of that edge the test cannot tell, and skips.
func (w *World) PastWindow(t *testing.T) bool {
	t.Helper()
	limit := keyWindowForTests - payoncetest.FastRetryPolicy().KeySafetyMargin
	now := w.Clock.Now()
	if w.B.OwnClock {
		var err error
		now, err = w.J.Now(t.Context())
		require.NoError(t, err)
	}
	young, old := now.Sub(w.Entries[RefJob2].KeyCreated), now.Sub(w.Entries[RefOrder2].KeyCreated)
	if old > limit-time.Minute && young < limit+time.Minute {
		t.Skipf("the golden's keys are %v to %v old, at the edge of their window", young, old)
	}
	return young >= limit
}

// ForEach runs f on every golden journal g with keep(g) (nil: all) on
// every backend.
func ForEach(t *testing.T, keep func(Golden) bool, f func(t *testing.T, w *World)) {
	for _, b := range Backends(t) {
		for _, g := range Goldens {
			if keep != nil && !keep(g) {
				continue
			}
			t.Run(b.Name+"/"+g.Commit, func(t *testing.T) {
				w := NewWorld(t, b, g)
				if w == nil {
					t.Skipf("no %s golden of %s", b.Name, g.Commit)
				}
				f(t, w)
			})
		}
	}
}
