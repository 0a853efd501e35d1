package pgjournal_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInboxConformance(t *testing.T) {
	journaltest.RunInbox(t, func(t *testing.T) journal.InboxStore { return open(t) })
}

// txInbox is a journal whose schema also holds the merchant's table of
// effects, written by the handler in its transaction.
func txInbox(t *testing.T) journaltest.TxInbox {
	j := open(t)
	effects := pgx.Identifier{j.Schema(), "effects"}.Sanitize()
	_, err := j.Pool().Exec(t.Context(), `CREATE TABLE `+effects+` (n bigserial PRIMARY KEY, event_id text NOT NULL)`)
	require.NoError(t, err)
	return journaltest.TxInbox{
		Store: j,
		Handler: func(then func() error) payonce.MarkingHandler {
			return j.HandlerTx(func(ctx context.Context, tx pgx.Tx, ev payonce.InboxEvent) error {
				if _, err := tx.Exec(ctx, `INSERT INTO `+effects+` (event_id) VALUES ($1)`, ev.EventID); err != nil {
					return err
				}
				return then()
			})
		},
		Effects: func(t *testing.T) []string {
			rows, err := j.Pool().Query(t.Context(), `SELECT event_id FROM `+effects+` ORDER BY n`)
			require.NoError(t, err)
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			return ids
		},
	}
}

func TestInboxTx(t *testing.T) {
	journaltest.RunInboxTx(t, txInbox)
}

// A worker that restarts (a new pool on the same schema) finds what was
// handled, and what was held, as it was.
func TestInboxSurvivesRestart(t *testing.T) {
	p := pool(t)
	name := schema(t, p)
	first, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	journaltest.InboxSurvivesRestart(t, first, func(t *testing.T) journal.InboxStore {
		first.Close()
		j, err := pgjournal.Open(t.Context(), os.Getenv(EnvURL), pgjournal.WithSchema(name))
		require.NoError(t, err)
		t.Cleanup(j.Close)
		return j
	})
}

func TestMarkHandledTxRefusesNilTransaction(t *testing.T) {
	j := open(t)
	_, err := j.MarkHandledTx(t.Context(), nil, payonce.InboxEvent{Scope: "s", EventID: "e", Fence: 1})
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// A database the code before the inbox wrote (schema version 3) gains
// the inbox on open, its entries kept.
func TestVersionThreeSchemaGainsTheInbox(t *testing.T) {
	p := pool(t)
	name := schema(t, p)
	j, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	_, _, err = j.Reserve(t.Context(), journaltest.Entry("s", "kept"))
	require.NoError(t, err)
	j.Close()
	for _, stmt := range []string{
		"DROP TABLE " + pgx.Identifier{name, "payonce_inbox"}.Sanitize(),
		"ALTER TABLE " + pgx.Identifier{name, "payonce_journal"}.Sanitize() + " DROP COLUMN resource_id",
		"DELETE FROM " + pgx.Identifier{name, "payonce_journal_migrations"}.Sanitize() + " WHERE version > 3",
	} {
		_, err := p.Exec(t.Context(), stmt)
		require.NoError(t, err, stmt)
	}
	j, err = pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	defer j.Close()
	_, err = j.Get(t.Context(), "s", "kept")
	require.NoError(t, err)
	var c atomic.Int32
	res, err := payonce.HandleOnce(t.Context(), j, journaltest.Event("s", "ev-1"), payonce.EventHandler(func(context.Context, payonce.InboxEvent) error {
		c.Add(1)
		return nil
	}))
	require.NoError(t, err)
	assert.Equal(t, payonce.InboxHandled, res.Outcome)
	assert.EqualValues(t, 1, c.Load())
	var v int
	require.NoError(t, p.QueryRow(t.Context(), "SELECT MAX(version) FROM "+pgx.Identifier{name, "payonce_journal_migrations"}.Sanitize()).Scan(&v))
	assert.GreaterOrEqual(t, v, 5)
	assert.Equal(t, pgjournal.SchemaVersion(), v)
}
