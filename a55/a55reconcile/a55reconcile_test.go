package a55reconcile_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55reconcile"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/payonce/payonce/reconcile"
)

// store is every journal backend: the journal, its lister and its inbox.
type store interface {
	reconcile.Journal
	journal.InboxStore
}

// journals opens one journal of each backend (PostgreSQL when
// PAYONCE_POSTGRES_URL names a database).
func journals(t *testing.T) map[string]func(t *testing.T) store {
	js := map[string]func(t *testing.T) store{
		"memory": func(t *testing.T) store { return journal.NewMemory() },
		"sqlite": func(t *testing.T) store {
			j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "journal.db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = j.Close() })
			return j
		},
	}
	url := os.Getenv("PAYONCE_POSTGRES_URL")
	if url == "" {
		t.Log("PAYONCE_POSTGRES_URL is not set: the PostgreSQL cases of a55reconcile are skipped")
		return js
	}
	js["postgres"] = func(t *testing.T) store {
		schema := fmt.Sprintf("payonce_reconcile_%d", time.Now().UnixNano())
		t.Cleanup(func() {
			pool, err := pgxpool.New(context.Background(), url)
			if err == nil {
				_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
				pool.Close()
			}
		})
		j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		t.Cleanup(j.Close)
		return j
	}
	return js
}

// charge is a card charge of 42.00 in A55's reference form; the client's
// account (the fake's own) gives the merchant and wallet.
func charge(card string) *a55.ChargeCreateRequest {
	r := a55test.CardCharge("42.00", card)
	r.Description = "an order"
	return r
}

// planted plants against the A55 fake and j one case of every mismatch a
// reconcile reports, and a matching case of each that it must not; then
// it moves the clock 25 h on, so the entry whose answer was lost is in
// doubt. It returns the server, the journaled client, the span's start
// and the charge of each case.
func planted(t *testing.T, j store) (*a55test.Server, *a55.Client, time.Time, map[string]string) {
	ctx := t.Context()
	srv := a55test.New(t)
	client, err := srv.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	plain, err := srv.Client()
	require.NoError(t, err)
	from := srv.Clock().Now().Add(-time.Minute)
	scope := client.Core().Scope()
	charges := map[string]string{}
	create := func(ref, card string) (*a55.Charge, error) {
		return client.Charges.Create(ctx, charge(card), payonce.WithReference(ref))
	}
	confirmed := func(ref string) string {
		t.Helper()
		ch, err := create(ref, a55test.CardConfirms)
		require.NoError(t, err)
		return ch.UUID
	}
	byHand := func(ref string, key payonce.Key, st payonce.Settlement) {
		t.Helper()
		_, _, err := j.Reserve(ctx, payonce.JournalEntry{Scope: scope, Reference: ref, Operation: a55reconcile.Operation,
			Method: http.MethodPost, Path: a55.PathCharges, Key: key.String(), KeyCreated: key.Created(),
			Fingerprint: "planted", Sent: true, Attempts: 1})
		require.NoError(t, err)
		_, err = client.Core().Settle(ctx, ref, st)
		require.NoError(t, err)
	}
	newKey := func(job string) payonce.Key {
		t.Helper()
		k, err := payonce.NewKey(srv.Clock().Now(), "charge", job)
		require.NoError(t, err)
		return k
	}

	charges["fine"] = confirmed("job-fine/charge")

	// A charge at A55 that no entry records.
	ch, err := plain.Charges.Create(ctx, charge(a55test.CardConfirms))
	require.NoError(t, err)
	charges["unrecorded"] = ch.UUID

	// An entry recorded failed (by hand) whose charge exists, under its key.
	key := newKey("job-failed")
	ch, err = plain.Charges.Create(ctx, charge(a55test.CardConfirms), payonce.WithKey(key))
	require.NoError(t, err)
	charges["failed-but-charged"] = ch.UUID
	byHand("job-failed/charge", key, payonce.Settlement{State: payonce.JournalFailed, Reason: "support: declined"})

	// An entry recorded succeeded with a charge A55 does not list.
	byHand("job-missing/charge", newKey("job-missing"), payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"charge_uuid":"00000000-0000-4000-8000-00000000dead","status":"confirmed"}`), Reason: "typed in by hand"})

	// An entry recorded succeeded (by hand) whose charge A55 declined.
	_, err = plain.Charges.Create(ctx, charge(a55test.CardDeclined))
	declined, ok := a55.ChargeFromError(err)
	require.True(t, ok, "%v", err)
	charges["declined"] = declined.UUID
	byHand("job-declined/charge", newKey("job-declined"), payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"charge_uuid":"` + declined.UUID + `","status":"confirmed"}`), Reason: "misread the console"})

	// Two attempts of one order, both confirmed.
	charges["attempt-1"] = confirmed("order-7/attempt-1")
	charges["attempt-2"] = confirmed("order-7/attempt-2")
	// Two attempts of another, the first declined (recorded failed with
	// its charge in status error): one success.
	_, err = create("order-8/attempt-1", a55test.CardDeclined)
	require.ErrorIs(t, err, a55.ErrCardDeclined)
	charges["order-8"] = confirmed("order-8/attempt-2")

	// A refund the inbox never received, and one it did.
	for _, ref := range []string{"order-9/attempt-1", "order-10/attempt-1"} {
		id := confirmed(ref)
		charges[ref] = id
		_, err = plain.Charges.Refund(ctx, &a55.RefundRequest{ChargeUUID: id})
		require.NoError(t, err)
	}
	_, _, err = j.RecordEvent(ctx, payonce.InboxEvent{Scope: scope, EventID: "charge/" + charges["order-10/attempt-1"] + "/refunded",
		ResourceID: charges["order-10/attempt-1"], Type: "refunded", Body: []byte(`{}`)})
	require.NoError(t, err)

	// A charge whose answer was lost, and the list that would find it
	// down: pending, then in doubt.
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 10}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargesPath, Count: 20}))
	_, err = create("job-doubt/charge", a55test.CardConfirms)
	require.Error(t, err)
	srv.ClearFaults()
	var last string
	for c, err := range plain.Charges.All(ctx, nil) {
		require.NoError(t, err)
		last = c.UUID
	}
	charges["in-doubt"] = last
	srv.Clock().Advance(25 * time.Hour)
	return srv, client, from, charges
}

// sameRows asserts the report's findings are want, in any order within a
// kind (the order of times two clocks gave), the kinds in report order.
func sameRows(t *testing.T, want [][3]string, rep *reconcile.Report) {
	t.Helper()
	got := rows(rep)
	assert.ElementsMatch(t, want, got)
	kinds := func(rs [][3]string) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r[0])
		}
		return out
	}
	assert.Equal(t, kinds(want), kinds(got), "kinds in report order")
}

func rows(rep *reconcile.Report) [][3]string {
	out := [][3]string{}
	for _, f := range rep.Findings {
		out = append(out, [3]string{string(f.Kind), f.Reference, f.ResourceID})
	}
	return out
}

func TestReconcileReportsEveryPlantedMismatch(t *testing.T) {
	for name, open := range journals(t) {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			srv, client, from, charges := planted(t, j)
			prov := a55reconcile.New(client)
			o := reconcile.Options{From: from, To: from.Add(time.Hour), Now: srv.Clock().Now()}
			rep, err := reconcile.Run(t.Context(), prov, j, o)
			require.NoError(t, err)
			want := [][3]string{
				{"in-doubt", "job-doubt/charge", charges["in-doubt"]},
				{"misrecorded", "job-declined/charge", charges["declined"]},
				{"misrecorded", "job-failed/charge", charges["failed-but-charged"]},
				{"misrecorded", "job-missing/charge", "00000000-0000-4000-8000-00000000dead"},
				{"two-successes", "order-7/attempt-1", charges["attempt-1"]},
				{"two-successes", "order-7/attempt-2", charges["attempt-2"]},
				{"unrecorded", "", charges["unrecorded"]},
			}
			sameRows(t, want, rep)
			assert.Equal(t, 11, rep.Resources, "every charge created in the span")
			assert.Equal(t, 11, rep.Entries)
			by := map[string]reconcile.Finding{}
			for _, f := range rep.Findings {
				by[f.Reference] = f
			}
			assert.Equal(t, "42.00", by[""].Amount.String())
			assert.Equal(t, payonce.BRL, by[""].Currency)
			assert.Contains(t, by["job-declined/charge"].Detail, "a failure")
			assert.Contains(t, by["job-missing/charge"].Detail, "not in the provider's list")
			assert.Contains(t, by["job-doubt/charge"].Detail, "under its key")

			o.Inbox = j
			rep, err = reconcile.Run(t.Context(), prov, j, o)
			require.NoError(t, err)
			sameRows(t, append(want, [3]string{"unreceived-status", "order-9/attempt-1", charges["order-9/attempt-1"]}), rep)
			f := rep.Findings[len(rep.Findings)-1]
			assert.Equal(t, "refunded", f.Status)
			assert.Equal(t, "confirmed", f.Known)
		})
	}
}

func TestOutcome(t *testing.T) {
	srv := a55test.New(t)
	c, err := srv.Client()
	require.NoError(t, err)
	p := a55reconcile.New(c)
	for status, want := range map[string]reconcile.Outcome{
		"confirmed": reconcile.OutcomeSucceeded, "PAID": reconcile.OutcomeSucceeded, "refunded": reconcile.OutcomeSucceeded,
		"chargeback_requested": reconcile.OutcomeSucceeded,
		"ERROR":                reconcile.OutcomeFailed, " declined ": reconcile.OutcomeFailed,
		"pending": reconcile.OutcomePending, "Issued": reconcile.OutcomePending,
		"canceled": reconcile.OutcomeReversed, "expired": reconcile.OutcomeReversed, "chargeback_refunded": reconcile.OutcomeReversed,
		"mystery": reconcile.OutcomeUnknown, "": reconcile.OutcomeUnknown,
	} {
		assert.Equal(t, want, p.Outcome(status), status)
	}
	r, ok := p.Recorded(payonce.JournalEntry{Result: []byte(`{"charge_uuid":"c-1","status":"confirmed","amount":"1.50","wallet_uuid":"w"}`)})
	require.True(t, ok)
	assert.Equal(t, "c-1", r.ID)
	assert.Equal(t, "confirmed", r.Status)
	assert.Equal(t, "w", r.Account)
	for _, bad := range []string{``, `{}`, `not json`} {
		_, ok := p.Recorded(payonce.JournalEntry{Result: []byte(bad)})
		assert.False(t, ok, bad)
	}
}

// A hostile list answer is an error, never a report on part of it; the
// list is asked for by wallet and date window.
func TestHostileListIsAnError(t *testing.T) {
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[{"status":"confirmed","amount":"1.00"}],"page":1,"limit":100,"total":1}`))
	}))
	t.Cleanup(srv.Close)
	c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(srv.URL), payonce.WithScope("shop/a55"))
	require.NoError(t, err)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	_, err = reconcile.Run(t.Context(), a55reconcile.New(c, "wallet-1"), journal.NewMemory(),
		reconcile.Options{From: now.Add(-time.Hour), To: now, Now: now})
	require.ErrorIs(t, err, reconcile.ErrMalformedResource)
	assert.Contains(t, query, "wallet_uuid=wallet-1")
	assert.Contains(t, query, "date_start=2026-12-01T10%3A45%3A00Z", "the span less the margin")
	assert.Contains(t, query, "date_end=2026-12-01T12%3A15%3A00Z", "nothing is created after now and the margin")
}
