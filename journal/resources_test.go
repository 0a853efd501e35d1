package journal_test

import (
	"context"
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
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

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
