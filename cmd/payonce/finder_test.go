package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command's journal handle passes the journal's JournalFinder on: a
// settle by lookup through it asks who holds a payment.
func TestJournalHandlePassesTheFinderOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	h, err := openJournal(t.Context(), common{journal: path})
	require.NoError(t, err)
	defer h.close()
	var s journal.Store = h
	f, ok := s.(payonce.JournalFinder)
	require.True(t, ok)
	got, err := f.Holders(t.Context(), "s", "ch_1")
	require.NoError(t, err)
	assert.Empty(t, got)

	bare := &journalHandle{Store: storeOnly{journal.NewMemory()}}
	_, err = bare.Holders(context.Background(), "s", "ch_1")
	require.ErrorIs(t, err, payonce.ErrLookupUnsupported)
}

// storeOnly is a journal.Store without JournalFinder.
type storeOnly struct{ journal.Store }
