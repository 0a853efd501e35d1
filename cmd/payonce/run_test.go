package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backend is a journal the command opens by its -journal (and -schema)
// flags, and the same journal opened for the test's own client.
type backend struct {
	name  string
	flags []string
	open  func(t *testing.T) journal.Store
}

func backends(t *testing.T) []backend {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	bs := []backend{{"sqlite", []string{"-journal", path}, func(t *testing.T) journal.Store {
		j, err := sqlitejournal.Open(t.Context(), path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Close() })
		return j
	}}}
	url := os.Getenv("PAYONCE_POSTGRES_URL")
	if url == "" {
		t.Log("PAYONCE_POSTGRES_URL is not set: the PostgreSQL cases of cmd/payonce are skipped")
		return bs
	}
	schema := fmt.Sprintf("payonce_cmd_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		pool, err := pgxpool.New(context.Background(), url)
		if err == nil {
			_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			pool.Close()
		}
	})
	return append(bs, backend{"postgres", []string{"-journal", url, "-schema", schema}, func(t *testing.T) journal.Store {
		j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(j.Close)
		return j
	}})
}

// cli runs the command in-process against srv's listener and clock.
type cli struct {
	t   *testing.T
	srv *coinepaytest.Server
	env map[string]string
}

func (c cli) run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runWith(c.t.Context(), args, &out, &errb, func(k string) string { return c.env[k] },
		deps{httpClient: c.srv.HTTPClient(), now: c.srv.Clock().Now})
	return code, out.String(), errb.String()
}

func TestJournalCommandEndToEnd(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := coinepaytest.New(t)
			j := b.open(t)
			client, err := srv.Client(payonce.WithJournal(j))
			require.NoError(t, err)
			scope := client.Core().Scope()
			c := cli{t: t, srv: srv, env: map[string]string{
				EnvCoinepayAPIKey: srv.APIKey(), EnvCoinepayAPISecret: srv.Secret(), EnvCoinepayBaseURL: srv.URL,
			}}
			apply := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}

			// A lost answer leaves a pending entry; after 25 h it is in doubt.
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 5}))
			_, err = client.Cards.Apply(ctx, apply, payonce.WithReference("job-7/apply"))
			require.Error(t, err)
			srv.Clock().Advance(25 * time.Hour)
			_, err = client.Cards.Apply(ctx, apply, payonce.WithReference("job-7/apply"))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			before, err := j.Get(ctx, scope, "job-7/apply")
			require.NoError(t, err)

			code, out, stderr := c.run(append([]string{"journal", "list", "-state", "in-doubt", "-json"}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			var listed []entryView
			require.NoError(t, json.Unmarshal([]byte(out), &listed))
			require.Len(t, listed, 1)
			assert.Equal(t, "job-7/apply", listed[0].Reference)
			assert.True(t, listed[0].InDoubt)
			code, out, _ = c.run(append([]string{"journal", "list", "-state", "pending", "-json"}, b.flags...)...)
			require.Equal(t, 0, code)
			assert.JSONEq(t, "[]", out)
			code, out, _ = c.run(append([]string{"journal", "list"}, b.flags...)...)
			require.Equal(t, 0, code)
			assert.Contains(t, out, "job-7/apply")
			assert.Contains(t, out, "in-doubt")

			code, out, stderr = c.run(append([]string{"journal", "show", scope, "job-7/apply"}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, before.Key)
			assert.NotContains(t, out, srv.Secret())

			// Bad inputs: an error on stderr, a non-zero exit, the row unchanged.
			bad := [][]string{
				{"journal", "settle", "-bogus", scope, "job-7/apply"},
				{"journal", "settle", "-outcome", "failed", scope, "job-7/apply"},
				{"journal", "settle", "-outcome", "maybe", "-reason", "x", scope, "job-7/apply"},
				{"journal", "settle", "-outcome", "succeeded", "-reason", "x", scope, "job-7/apply"},
				{"journal", "settle", "-outcome", "failed", "-reason", "x", scope, "no-such/ref"},
				{"journal", "settle", "-lookup", scope, "job-7/apply"},
				{"journal", "settle", "-lookup", "-header-id", "h1", "-package-id", "p2", scope, "job-7/apply"},
				{"journal", "purge"},
			}
			for _, args := range bad {
				code, _, stderr := c.run(append(args, b.flags...)...)
				assert.NotEqual(t, 0, code, "%v", args)
				assert.Contains(t, stderr, "payonce: ", "%v", args)
			}
			other := c
			other.env = map[string]string{EnvCoinepayAPIKey: srv.APIKey(), EnvCoinepayAPISecret: srv.Secret(), EnvCoinepayBaseURL: srv.URL, EnvScope: "coinepay:another-merchant"}
			code, _, stderr = other.run(append([]string{"journal", "settle", "-lookup", "-header-id", "h1", "-package-id", "p1", scope, "job-7/apply"}, b.flags...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, "scope")
			after, err := j.Get(ctx, scope, "job-7/apply")
			require.NoError(t, err)
			assert.Equal(t, before, after, "bad input changed the row")

			// The lookup records the card; the next call answers from the journal.
			code, out, stderr = c.run(append([]string{"journal", "settle", "-lookup", "-header-id", "h1", "-package-id", "p1", "-json", scope, "job-7/apply"}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			var settled settleResult
			require.NoError(t, json.Unmarshal([]byte(out), &settled))
			assert.Equal(t, "succeeded", settled.Outcome)
			assert.True(t, settled.Recorded)
			card, err := client.Cards.Apply(ctx, apply, payonce.WithReference("job-7/apply"))
			require.NoError(t, err)
			assert.True(t, card.Meta.FromJournal)
			assert.Equal(t, "card "+card.CardID, settled.Found)
			assert.Equal(t, 1, srv.Ledger().CountKind("card.apply"), "one card")

			// A settled entry is refused, unchanged.
			code, _, stderr = c.run(append([]string{"journal", "settle", "-outcome", "failed", "-reason", "x", scope, "job-7/apply"}, b.flags...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, "already succeeded")

			// Purge: too young, then aged.
			code, out, _ = c.run(append([]string{"journal", "purge", "-older-than", "720h", "-json"}, b.flags...)...)
			require.Equal(t, 0, code)
			var pr purgeResult
			require.NoError(t, json.Unmarshal([]byte(out), &pr))
			assert.Equal(t, int64(0), pr.Count)
			srv.Clock().Advance(31 * 24 * time.Hour)
			code, out, _ = c.run(append([]string{"journal", "purge", "-older-than", "720h", "-dry-run", "-json"}, b.flags...)...)
			require.Equal(t, 0, code)
			require.NoError(t, json.Unmarshal([]byte(out), &pr))
			assert.Equal(t, int64(1), pr.Count)
			_, err = j.Get(ctx, scope, "job-7/apply")
			require.NoError(t, err, "a dry run deletes nothing")
			code, out, stderr = c.run(append([]string{"journal", "purge", "-older-than", "720h"}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, out, "deleted 1 settled entries")
			_, err = j.Get(ctx, scope, "job-7/apply")
			require.ErrorIs(t, err, journal.ErrNotFound)
		})
	}
}
