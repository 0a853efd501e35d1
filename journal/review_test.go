package journal_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

// Many goroutines, each with its own client and its own journal handle
// (for SQLite, its own connection pool on the shared file, as a process
// would have), call one reference at once while the fake loses answers,
// answers 503 and resets connections: the charge is executed once and
// every caller that gets a result gets that one charge.
func TestOneReferenceFromManyWorkersWithFaultsChargesOnce(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			_, reopen := b.open(t)
			srv := a55test.New(t)
			for _, f := range []payoncetest.Rule{
				{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 2},
				{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Status: 503, Probability: 0.3},
				{Fault: payoncetest.FaultResetBeforeRead, Path: a55test.ChargePath, Probability: 0.2},
			} {
				require.NoError(t, srv.AddFault(f))
			}
			const workers = 12
			clients := make([]*a55.Client, workers)
			for i := range clients {
				clients[i] = a55Client(t, srv, reopen(t))
			}
			ids, keys := callTogether(t, workers, func(w int) (string, string, error) {
				ch, err := clients[w].Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-1/charge"))
				if err != nil {
					return "", "", err
				}
				return ch.UUID, ch.Meta.Key.ID(), nil
			})
			srv.ClearFaults()
			ch, err := clients[0].Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-1/charge"))
			require.NoError(t, err)
			ids[ch.UUID] = true
			assert.Len(t, keys, 1, "one key for the reference")
			assert.Len(t, ids, 1, "every caller got the one charge")
			assert.Equal(t, 1, srv.Ledger().CountKind("charge.create"))
		})
	}
}

// An entry a merchant reserved in its own transaction without a
// fingerprint still names its method and path: a call of another
// operation with that reference is a conflict, nothing sent, instead of
// running the other operation under the reserved key.
func TestReserveTxEntryWithoutFingerprintRefusesAnotherOperation(t *testing.T) {
	srv := a55test.New(t)
	j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
	require.NoError(t, err)
	defer j.Close()
	c := a55Client(t, srv, j)
	tx, err := j.DB().BeginTx(t.Context(), nil)
	require.NoError(t, err)
	_, _, err = j.ReserveTx(t.Context(), tx, payonce.JournalEntry{Scope: c.Core().Scope(), Reference: "o-9/step",
		Operation: "wallets.create", Method: "POST", Path: a55.PathWallets, Key: "reserved-key-o9-0001", KeyCreated: srv.Clock().Now()})
	require.NoError(t, err)
	require.NoError(t, tx.Commit())

	_, err = c.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-9/step"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.Empty(t, srv.Requests(), "nothing sent")
}

// A journal file locked by another writer longer than the busy timeout
// is a typed ErrJournal error, nothing sent; never a silent failure.
func TestSQLiteBusyIsATypedJournalError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	j, err := sqlitejournal.Open(t.Context(), path, sqlitejournal.WithBusyTimeout(50e6))
	require.NoError(t, err)
	defer j.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(t.Context(), "BEGIN IMMEDIATE")
	require.NoError(t, err)
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()

	srv := a55test.New(t)
	_, err = a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-busy"))
	require.ErrorIs(t, err, payonce.ErrJournal)
	var apiErr *payonce.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.NotEmpty(t, apiErr.Key)
	assert.Empty(t, srv.Requests(), "nothing sent")
}

// A closed journal is a typed ErrJournal error, nothing sent.
func TestClosedJournalIsATypedErrorAndSendsNothing(t *testing.T) {
	for _, b := range backends(t) {
		if b.name == "memory" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			_, reopen := b.open(t)
			j := reopen(t)
			switch c := j.(type) {
			case interface{ Close() error }:
				require.NoError(t, c.Close())
			case interface{ Close() }:
				c.Close()
			default:
				t.Fatalf("%T has no Close", j)
			}
			srv := a55test.New(t)
			_, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-closed"))
			require.ErrorIs(t, err, payonce.ErrJournal)
			for _, r := range srv.Requests() {
				assert.NotEqual(t, a55test.ChargePath, r.Path, "nothing sent")
			}
		})
	}
}

// Opening and closing the SQLite journal many times, with operations in
// between, leaves no goroutine behind.
func TestSQLiteOpenCloseLeavesNoGoroutine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leak.db")
	srv := a55test.New(t)
	cycle := func(i int) {
		j, err := sqlitejournal.Open(t.Context(), path)
		require.NoError(t, err)
		_, err = a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"),
			payonce.WithReference(fmt.Sprintf("leak-%d", i)))
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	cycle(0)
	srv.HTTPClient().CloseIdleConnections()
	before := runtime.NumGoroutine()
	for i := 1; i <= 20; i++ {
		cycle(i)
	}
	srv.HTTPClient().CloseIdleConnections()
	assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+2 }, 30*time.Second, 10*time.Millisecond,
		"goroutines: before %d, after %d", before, runtime.NumGoroutine())
}

// Many operations through the PostgreSQL journal hold at most the pool's
// connections, and Close gives every one of them back.
func TestPostgresConnectionsAreBoundedAndReleased(t *testing.T) {
	url := os.Getenv("PAYONCE_POSTGRES_URL")
	if url == "" {
		t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL connection test")
	}
	app := fmt.Sprintf("payonce_review_%d", time.Now().UnixNano())
	schema := app
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	j, err := pgjournal.Open(t.Context(), url+sep+"application_name="+app+"&pool_max_conns=4", pgjournal.WithSchema(schema))
	require.NoError(t, err)
	admin, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	defer admin.Close()
	defer func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	}()
	count := func() int {
		var n int
		require.NoError(t, admin.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n))
		return n
	}
	srv := a55test.New(t)
	c := a55Client(t, srv, j)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				_, err := c.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference(fmt.Sprintf("conn-%d-%d", w, i%5)))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, count(), 4)
	j.Close()
	assert.Eventually(t, func() bool { return count() == 0 }, 30*time.Second, 20*time.Millisecond, "connections left open")
}

// A reference that is not valid UTF-8 is refused as bad input, before
// anything is recorded or sent, whatever the backend (PostgreSQL's text
// columns cannot hold it; SQLite would).
func TestReferenceThatIsNotUTF8IsInvalidInput(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j, _ := b.open(t)
			srv := a55test.New(t)
			_, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-\xff/charge"))
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			assert.NotErrorIs(t, err, payonce.ErrJournal)
			assert.Empty(t, srv.Requests(), "nothing sent")
			pending, err := j.Pending(t.Context(), journal.PendingQuery{})
			require.NoError(t, err)
			assert.Empty(t, pending)
		})
	}
}

// Coinepay: many workers, each with its own client and journal handle and
// no key of their own, open one card for one reference while the fake
// loses answers, answers 503 and resets: the journal gives all of them one
// key and the fake opens one card.
func TestCoinepayOneReferenceFromManyWorkersWithFaultsOpensOneCard(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			_, reopen := b.open(t)
			srv := coinepaytest.New(t)
			for _, f := range []payoncetest.Rule{
				{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 2},
				{Fault: payoncetest.FaultErrorBeforeCommit, Path: coinepay.PathCardApply, Status: 503, Probability: 0.3},
				{Fault: payoncetest.FaultResetBeforeRead, Path: coinepay.PathCardApply, Probability: 0.2},
			} {
				require.NoError(t, srv.AddFault(f))
			}
			req := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}
			const workers = 10
			clients := make([]*coinepay.Client, workers)
			for i := range clients {
				clients[i] = coinepayClient(t, srv, reopen(t))
			}
			cards, keys := callTogether(t, workers, func(w int) (string, string, error) {
				res, err := clients[w].Cards.Apply(t.Context(), req, payonce.WithReference("job-7"))
				if err != nil {
					return "", "", err
				}
				return res.Card.CardID, res.Meta.Key.ID(), nil
			})
			srv.ClearFaults()
			res, err := clients[0].Cards.Apply(t.Context(), req, payonce.WithReference("job-7"))
			require.NoError(t, err)
			cards[res.Card.CardID] = true
			assert.Len(t, keys, 1, "one key for the reference")
			assert.Len(t, cards, 1, "one card")
			assert.Equal(t, 1, srv.Ledger().Len())
		})
	}
}

// An entry reserved in the merchant's transaction without a key creation
// time could never run (the key-age guard would call it unknown on the
// first Do): ReserveTx refuses it, typed, and records nothing.
func TestReserveTxRefusesAnEntryWithoutKeyCreationTime(t *testing.T) {
	j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
	require.NoError(t, err)
	defer j.Close()
	tx, err := j.DB().BeginTx(t.Context(), nil)
	require.NoError(t, err)
	_, _, err = j.ReserveTx(t.Context(), tx, payonce.JournalEntry{Scope: "a55:x", Reference: "o-10/charge",
		Method: "POST", Path: a55.PathCharges, Key: "reserved-key-o10-0001"})
	require.ErrorIs(t, err, journal.ErrInvalidEntry)
	require.NoError(t, tx.Commit())
	_, err = j.Get(t.Context(), "a55:x", "o-10/charge")
	require.ErrorIs(t, err, payonce.ErrJournalNotFound)
}

// callTogether runs call from workers goroutines at once, each until it
// succeeds (at most 5 tries; a failure must be temporary or a conflict of
// a run in flight), and returns the IDs the successes gave and every key
// seen, successes and failures alike.
func callTogether(t *testing.T, workers int, call func(w int) (id, key string, err error)) (ids, keys map[string]bool) {
	t.Helper()
	var mu sync.Mutex
	ids, keys = map[string]bool{}, map[string]bool{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range 5 {
				id, key, err := call(w)
				mu.Lock()
				if err == nil {
					ids[id], keys[key] = true, true
					mu.Unlock()
					return
				}
				keys[payonce.KeyOf(err).ID()] = true
				mu.Unlock()
				assert.True(t, payonce.IsTemporary(err) || errors.Is(err, payonce.ErrIdempotencyConflict), "%v", err)
			}
		})
	}
	wg.Wait()
	return ids, keys
}
