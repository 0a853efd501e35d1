package journal_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal/sqlitejournal"
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
			for _, f := range []a55test.Rule{
				{Fault: a55test.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 2},
				{Fault: a55test.FaultErrorBeforeCommit, Path: a55test.ChargePath, Status: 503, Probability: 0.3},
				{Fault: a55test.FaultResetBeforeRead, Path: a55test.ChargePath, Probability: 0.2},
			} {
				require.NoError(t, srv.AddFault(f))
			}
			const workers = 12
			clients := make([]*a55.Client, workers)
			for i := range clients {
				clients[i] = a55Client(t, srv, reopen(t))
			}
			var mu sync.Mutex
			ids := map[string]bool{}
			keys := map[string]bool{}
			var wg sync.WaitGroup
			for _, c := range clients {
				wg.Go(func() {
					for range 5 {
						ch, err := c.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-1/charge"))
						mu.Lock()
						if err == nil {
							ids[ch.UUID] = true
							keys[ch.Meta.Key] = true
							mu.Unlock()
							return
						}
						if k := payonce.KeyOf(err); k != "" {
							keys[k] = true
						}
						mu.Unlock()
						require.True(t, payonce.IsTemporary(err) || errors.Is(err, payonce.ErrIdempotencyConflict), "%v", err)
					}
				})
			}
			wg.Wait()
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

var _ = os.Getenv
