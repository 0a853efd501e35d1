package sqlitejournal_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/require"
)

func TestInboxConformance(t *testing.T) {
	journaltest.RunInbox(t, func(t *testing.T) journal.InboxStore { return open(t) })
}

// txInbox is a journal whose file also holds the merchant's table of
// effects, written by the handler in its transaction.
func txInbox(t *testing.T) journaltest.TxInbox {
	j := open(t)
	_, err := j.DB().ExecContext(t.Context(), `CREATE TABLE effects (event_id TEXT NOT NULL)`)
	require.NoError(t, err)
	return journaltest.TxInbox{
		Store: j,
		Handler: func(then func() error) payonce.MarkingHandler {
			return j.HandlerTx(func(ctx context.Context, tx *sql.Tx, ev payonce.InboxEvent) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO effects (event_id) VALUES (?)`, ev.EventID); err != nil {
					return err
				}
				return then()
			})
		},
		Effects: func(t *testing.T) []string {
			rows, err := j.DB().QueryContext(t.Context(), `SELECT event_id FROM effects ORDER BY rowid`)
			require.NoError(t, err)
			defer rows.Close()
			var ids []string
			for rows.Next() {
				var id string
				require.NoError(t, rows.Scan(&id))
				ids = append(ids, id)
			}
			require.NoError(t, rows.Err())
			return ids
		},
	}
}

func TestInboxTx(t *testing.T) {
	journaltest.RunInboxTx(t, txInbox)
}

// The inbox lives in the journal's file: a process that restarts (the
// file reopened) finds what was handled, and what was held, as it was.
func TestInboxSurvivesReopeningTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	first, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	journaltest.InboxSurvivesRestart(t, first, func(t *testing.T) journal.InboxStore {
		require.NoError(t, first.Close())
		j, err := sqlitejournal.Open(t.Context(), path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Close() })
		return j
	})
}

func TestMarkHandledTxRefusesNilTransaction(t *testing.T) {
	j := open(t)
	_, err := j.MarkHandledTx(t.Context(), nil, payonce.InboxEvent{Scope: "s", EventID: "e", Fence: 1})
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}
