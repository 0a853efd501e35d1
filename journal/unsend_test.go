package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// plainBackends are the journals as a merchant opens them (no test
// wrapper): each, new and empty.
func plainBackends(t *testing.T) map[string]func(t *testing.T) journal.Store {
	bs := map[string]func(t *testing.T) journal.Store{
		"memory": func(*testing.T) journal.Store { return journal.NewMemory() },
		"sqlite": func(t *testing.T) journal.Store {
			j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = j.Close() })
			return j
		},
	}
	if url := os.Getenv("PAYONCE_POSTGRES_URL"); url != "" {
		bs["postgres"] = func(t *testing.T) journal.Store {
			schema := fmt.Sprintf("payonce_unsend_%d", time.Now().UnixNano())
			j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
			require.NoError(t, err)
			t.Cleanup(func() {
				_, _ = j.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
				j.Close()
			})
			return j
		}
	}
	return bs
}

// fingerprintKey keeps the entries' fingerprints when the client secret
// changes (payonce.WithFingerprintKey).
var fingerprintKey = payonce.WithFingerprintKey([]byte("fingerprint-key-of-the-shop-0123"))

// refusedClient is an A55 client of srv whose client secret the token
// endpoint refuses (401): no request ever reaches the API.
func refusedClient(t *testing.T, srv *a55test.Server, j journal.Store) *a55.Client {
	t.Helper()
	auth := a55.ClientCredentials(srv.ClientID(), "not-the-secret-0123")
	auth.TokenURL = srv.TokenURL()
	c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(srv.HTTPClient()),
		payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), payoncetest.ClientClock(srv.Clock().Now), payonce.WithJournal(j), fingerprintKey)
	require.NoError(t, err)
	return c.WithAccount(srv.Account())
}

// The token endpoint refuses the credentials, so no byte reaches the API:
// the entry is left pending and never sent, not "may have been sent". The
// same reference resumes with its key once the credentials are fixed, and
// one left unresumed past the key's window is recorded as not executed,
// never in doubt.
func TestTokenRefusalLeavesTheEntryNeverSent(t *testing.T) {
	for name, open := range plainBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			srv := a55test.New(t)
			j := open(t)
			bad := refusedClient(t, srv, j)
			scope := bad.Core().Scope()
			for _, ref := range []string{"o-401/charge", "o-401/late"} {
				_, err := bad.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference(ref))
				require.ErrorIs(t, err, payonce.ErrUnauthorized)
				e, err := j.Get(ctx, scope, ref)
				require.NoError(t, err)
				assert.Equal(t, payonce.JournalPending, e.State)
				assert.False(t, e.Sent, "no byte left: never sent")
				assert.Zero(t, e.Attempts)
				assert.Empty(t, e.LeaseOwner, "the run let go of it")
				assert.NotEmpty(t, e.LastCause)
			}
			assert.Empty(t, srv.Ledger().Operations(), "nothing reached the API")

			good := a55Client(t, srv, j, fingerprintKey)
			ch, err := good.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("o-401/charge"))
			require.NoError(t, err, "resumed once the credentials are right")
			e, err := j.Get(ctx, scope, "o-401/charge")
			require.NoError(t, err)
			assert.Equal(t, e.Key, ch.Meta.Key.String(), "with the reserved key")
			assert.True(t, srv.Ledger().ExecutedOnce(e.Key))

			srv.Clock().Advance(25 * time.Hour)
			_, err = good.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("o-401/late"))
			require.ErrorIs(t, err, payonce.ErrKeyExpired)
			require.NotErrorIs(t, err, payonce.ErrOutcomeUnknown, "never in doubt")
			late, err := j.Get(ctx, scope, "o-401/late")
			require.NoError(t, err)
			assert.True(t, late.NotExecuted())
			assert.Len(t, srv.Ledger().Operations(), 1, "nothing more sent")
		})
	}
}

// withoutUnsend is a journal that cannot take back the sent mark, as a
// third-party one may be.
type withoutUnsend struct{ journal.Store }

// With such a journal, a run its signer ended before any byte records the
// entry as not executed: never in doubt either.
func TestTokenRefusalWithoutUnsendIsNotExecuted(t *testing.T) {
	srv := a55test.New(t)
	j := withoutUnsend{journal.NewMemory()}
	bad := refusedClient(t, srv, j)
	_, err := bad.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-402/charge"))
	require.ErrorIs(t, err, payonce.ErrUnauthorized)
	require.ErrorIs(t, err, payonce.ErrNotExecuted)
	e, err := j.Get(t.Context(), bad.Core().Scope(), "o-402/charge")
	require.NoError(t, err)
	assert.True(t, e.NotExecuted())
	srv.Clock().Advance(25 * time.Hour)
	_, err = a55Client(t, srv, j, fingerprintKey).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-402/charge"))
	require.ErrorIs(t, err, payonce.ErrNotExecuted)
	require.NotErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.Empty(t, srv.Ledger().Operations())
}
