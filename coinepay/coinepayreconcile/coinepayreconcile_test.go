package coinepayreconcile_test

import (
	"context"
	"encoding/json"
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
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepayreconcile"
	"github.com/payonce/payonce/coinepay/coinepaytest"
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
		t.Log("PAYONCE_POSTGRES_URL is not set: the PostgreSQL cases of coinepayreconcile are skipped")
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

// planted is a fake Coinepay and a journal holding one of every
// mismatch, and the card each one is about.
type planted struct {
	srv    *coinepaytest.Server
	j      store
	client *coinepay.Client
	from   time.Time
	cards  map[string]string // what -> card ID
}

// plant makes, against the fake and the journal, one case of every
// mismatch a reconcile reports, and a matching case of each that it must
// not report; then it moves the clock 25 h on, so the entry whose answer
// was lost is in doubt.
func plant(t *testing.T, j store) *planted {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	client, err := srv.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	plain, err := srv.Client()
	require.NoError(t, err)
	p := &planted{srv: srv, j: j, client: client, from: srv.Clock().Now().Add(-time.Minute), cards: map[string]string{}}
	scope := client.Core().Scope()
	req := func(h string) *coinepay.ApplyRequest { return &coinepay.ApplyRequest{HeaderID: h, PackageID: "p1"} }
	apply := func(ref string) string {
		t.Helper()
		c, err := client.Cards.Apply(ctx, req("h1"), payonce.WithReference(ref))
		require.NoError(t, err)
		return c.CardID
	}
	reserve := func(ref string, key payonce.Key, h string) {
		t.Helper()
		body, err := json.Marshal(req(h))
		require.NoError(t, err)
		_, _, err = j.Reserve(ctx, payonce.JournalEntry{Scope: scope, Reference: ref, Operation: coinepayreconcile.Operation,
			Method: http.MethodPost, Path: coinepay.PathCardApply, Key: key.String(), KeyCreated: key.Created(),
			Fingerprint: client.Core().Fingerprint(http.MethodPost, coinepay.PathCardApply, body), Sent: true, Attempts: 1})
		require.NoError(t, err)
	}

	// Matched: issued and recorded, untouched since.
	p.cards["fine"] = apply("job-fine/apply")

	// A card issued at the provider that no entry records.
	c, err := plain.Cards.Apply(ctx, req("h9"))
	require.NoError(t, err)
	p.cards["unrecorded"] = c.CardID

	// An entry recorded failed (by hand) whose card exists, under its key.
	key, err := payonce.NewKey(srv.Clock().Now(), "apply", "job-failed")
	require.NoError(t, err)
	c, err = plain.Cards.Apply(ctx, req("h2"), payonce.WithKey(key))
	require.NoError(t, err)
	p.cards["failed-but-issued"] = c.CardID
	reserve("job-failed/apply", key, "h2")
	_, err = client.Core().Settle(ctx, "job-failed/apply", payonce.Settlement{State: payonce.JournalFailed, Reason: "support: no card issued"})
	require.NoError(t, err)

	// An entry recorded succeeded with a card the provider does not have.
	key, err = payonce.NewKey(srv.Clock().Now(), "apply", "job-missing")
	require.NoError(t, err)
	reserve("job-missing/apply", key, "h3")
	_, err = client.Core().Settle(ctx, "job-missing/apply", payonce.Settlement{State: payonce.JournalSucceeded,
		Result: []byte(`{"code":200,"message":"ok","data":{"card_id":"card_gone","status":"active"}}`), Reason: "typed in by hand"})
	require.NoError(t, err)

	// An entry recorded succeeded whose card the provider says failed.
	p.cards["issue-failed"] = apply("job-status/apply")
	require.NoError(t, srv.SetCardStatus(p.cards["issue-failed"], "FAILED"))

	// Two attempts of one order, both issued.
	p.cards["attempt-1"] = apply("order-7/attempt-1")
	p.cards["attempt-2"] = apply("order-7/attempt-2")
	// Two attempts of another, the first not executed: one card.
	key, err = payonce.NewKey(srv.Clock().Now(), "apply", "order-8-1")
	require.NoError(t, err)
	reserve("order-8/attempt-1", key, "h1")
	_, err = client.Core().Settle(ctx, "order-8/attempt-1", payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "never sent"})
	require.NoError(t, err)
	p.cards["order-8"] = apply("order-8/attempt-2")

	// A status the inbox never received, and one it did.
	p.cards["frozen-unheard"] = apply("order-9/attempt-1")
	require.NoError(t, srv.SetCardStatus(p.cards["frozen-unheard"], "frozen"))
	p.cards["frozen-heard"] = apply("order-10/attempt-1")
	require.NoError(t, srv.SetCardStatus(p.cards["frozen-heard"], "frozen"))
	_, _, err = j.RecordEvent(ctx, payonce.InboxEvent{Scope: scope, EventID: "card/" + p.cards["frozen-heard"] + "/frozen",
		ResourceID: p.cards["frozen-heard"], Type: "frozen", Body: []byte(`{}`)})
	require.NoError(t, err)

	// An apply whose answer was lost on every attempt: pending, then in doubt.
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 10}))
	_, err = client.Cards.Apply(ctx, req("h4"), payonce.WithReference("job-doubt/apply"))
	require.Error(t, err)
	srv.ClearFaults()
	p.cards["in-doubt"] = lastCard(t, plain)
	srv.Clock().Advance(25 * time.Hour)
	return p
}

// lastCard is the card the fake issued last.
func lastCard(t *testing.T, c *coinepay.Client) string {
	t.Helper()
	var id string
	for card, err := range c.Cards.All(t.Context(), nil) {
		require.NoError(t, err)
		id = card.CardID
	}
	return id
}

func (p *planted) options() reconcile.Options {
	return reconcile.Options{From: p.from, To: p.from.Add(time.Hour), Now: p.srv.Clock().Now()}
}

// rows is the report's findings as kind, reference, card.
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
			p := plant(t, open(t))
			reader, err := p.srv.Client()
			require.NoError(t, err)
			prov := coinepayreconcile.New(reader)
			assert.Equal(t, p.client.Core().Scope(), prov.Info().Scope, "a client of the same key and base URL has the journal's scope")

			want := [][3]string{
				{"in-doubt", "job-doubt/apply", p.cards["in-doubt"]},
				{"misrecorded", "job-failed/apply", p.cards["failed-but-issued"]},
				{"misrecorded", "job-missing/apply", "card_gone"},
				{"misrecorded", "job-status/apply", p.cards["issue-failed"]},
				{"two-successes", "order-7/attempt-1", p.cards["attempt-1"]},
				{"two-successes", "order-7/attempt-2", p.cards["attempt-2"]},
				{"unrecorded", "", p.cards["unrecorded"]},
			}
			rep, err := reconcile.Run(t.Context(), prov, p.j, p.options())
			require.NoError(t, err)
			sameRows(t, want, rep)
			assert.True(t, rep.NeedsAttention())
			assert.False(t, rep.Inbox)
			assert.Equal(t, 10, rep.Resources, "every card issued in the span")
			assert.Equal(t, 11, rep.Entries, "every cards.apply entry reserved in the span")

			by := map[string]reconcile.Finding{}
			for _, f := range rep.Findings {
				by[f.Reference] = f
			}
			assert.Equal(t, "in-doubt", by["job-doubt/apply"].EntryState)
			assert.Contains(t, by["job-doubt/apply"].Detail, "under its key")
			assert.Equal(t, "failed", by["job-failed/apply"].EntryState)
			assert.Equal(t, "active", by["job-failed/apply"].Status)
			assert.Contains(t, by["job-missing/apply"].Detail, "does not exist")
			assert.Equal(t, "FAILED", by["job-status/apply"].Status)
			assert.Equal(t, "active", by["job-status/apply"].Known)
			assert.Equal(t, "order-7", by["order-7/attempt-1"].Order)
			assert.Equal(t, "h9/p1", by[""].Account)
			assert.Equal(t, "USD", string(by[""].Currency))

			// With the inbox in use: the change it never received.
			o := p.options()
			in, err := reconcile.InboxInUse(t.Context(), p.j, prov.Info().Scope)
			require.NoError(t, err)
			require.True(t, in)
			o.Inbox = p.j
			rep, err = reconcile.Run(t.Context(), prov, p.j, o)
			require.NoError(t, err)
			sameRows(t, append(want, [3]string{"unreceived-status", "order-9/attempt-1", p.cards["frozen-unheard"]}), rep)
			f := rep.Findings[len(rep.Findings)-1]
			assert.Equal(t, "frozen", f.Status)
			assert.Equal(t, "active", f.Known)
		})
	}
}

// The same journal and fake, all settled: nothing needs a person.
func TestReconcileOfAMatchingJournalIsClean(t *testing.T) {
	for name, open := range journals(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			j := open(t)
			srv := coinepaytest.New(t)
			client, err := srv.Client(payonce.WithJournal(j))
			require.NoError(t, err)
			from := srv.Clock().Now().Add(-time.Minute)
			for i := range 3 {
				_, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
					payonce.WithReference(fmt.Sprintf("order-%d/attempt-1", i)))
				require.NoError(t, err)
			}
			rep, err := reconcile.Run(ctx, coinepayreconcile.New(client), j,
				reconcile.Options{From: from, To: from.Add(time.Hour), Now: srv.Clock().Now(), Inbox: j})
			require.NoError(t, err)
			assert.Empty(t, rep.Findings)
			assert.False(t, rep.NeedsAttention())
			assert.Equal(t, 3, rep.Resources)
			assert.Equal(t, 3, rep.Entries)
		})
	}
}

// A hostile card/list answer is an error, never a report on part of it.
func TestHostileListIsAnError(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		want error
	}{
		"card without an ID": {`{"code":200,"message":"ok","message_key":"success","data":{"items":[{"status":"active"}],"page":1,"page_size":100,"total":1}}`, reconcile.ErrMalformedResource},
		"not a list":         {`{"code":200,"message":"ok","message_key":"success","data":{"items":"x"}}`, payonce.ErrMalformedResponse},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			c, err := coinepay.NewClient("k", "s", payonce.WithBaseURL(srv.URL))
			require.NoError(t, err)
			now := time.Now()
			_, err = reconcile.Run(t.Context(), coinepayreconcile.New(c), journal.NewMemory(), reconcile.Options{From: now.Add(-time.Hour), To: now})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestOutcomeAndRecorded(t *testing.T) {
	c, err := coinepay.NewClient("k", "s", payonce.WithBaseURL("http://127.0.0.1:1"))
	require.NoError(t, err)
	p := coinepayreconcile.New(c)
	for status, want := range map[string]reconcile.Outcome{
		"active": reconcile.OutcomeSucceeded, "Frozen": reconcile.OutcomeSucceeded, "": reconcile.OutcomeSucceeded,
		"failed": reconcile.OutcomeFailed, " REJECTED ": reconcile.OutcomeFailed, "Error": reconcile.OutcomeFailed,
	} {
		assert.Equal(t, want, p.Outcome(status), status)
	}
	r, ok := p.Recorded(payonce.JournalEntry{Result: []byte(`{"code":200,"data":{"card_id":"card_1","status":"active","header_id":"h","package_id":"p"}}`)})
	require.True(t, ok)
	assert.Equal(t, reconcile.Resource{ID: "card_1", Status: "active", Account: "h/p"}, r)
	for _, bad := range []string{``, `{}`, `{"data":null}`, `{"data":{"status":"active"}}`, `not json`} {
		_, ok := p.Recorded(payonce.JournalEntry{Result: []byte(bad)})
		assert.False(t, ok, bad)
	}
}

// Answering as Coinepay documents, without the key that issued a card, a
// card issued under an entry recorded failed or still in doubt is tied to
// nothing: it is unrecorded, and the rows name the entries that could
// have made it, never one guessed.
func TestWithoutKeysCandidatesAreNamedNeverGuessed(t *testing.T) {
	for name, open := range journals(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			j := open(t)
			srv := coinepaytest.New(t, payoncetest.WithDocumentedAnswers())
			client, err := srv.Client(payonce.WithJournal(j))
			require.NoError(t, err)
			plain, err := srv.Client()
			require.NoError(t, err)
			from := srv.Clock().Now().Add(-time.Minute)
			fine, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference("job-fine/apply"))
			require.NoError(t, err)
			key, err := payonce.NewKey(srv.Clock().Now(), "apply", "job-failed")
			require.NoError(t, err)
			issued, err := plain.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h2", PackageID: "p1"}, payonce.WithKey(key))
			require.NoError(t, err)
			require.Empty(t, issued.IdempotencyKey, "documented answers carry no key")
			_, _, err = j.Reserve(ctx, payonce.JournalEntry{Scope: client.Core().Scope(), Reference: "job-failed/apply",
				Operation: coinepayreconcile.Operation, Method: http.MethodPost, Path: coinepay.PathCardApply,
				Key: key.String(), KeyCreated: key.Created(), Fingerprint: "planted", Sent: true, Attempts: 1})
			require.NoError(t, err)
			_, err = client.Core().Settle(ctx, "job-failed/apply", payonce.Settlement{State: payonce.JournalFailed, Reason: "support: no card"})
			require.NoError(t, err)
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 10}))
			_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h3", PackageID: "p1"}, payonce.WithReference("job-doubt/apply"))
			require.Error(t, err)
			srv.ClearFaults()
			doubt := lastCard(t, plain)
			srv.Clock().Advance(25 * time.Hour)

			rep, err := reconcile.Run(ctx, coinepayreconcile.New(client), j,
				reconcile.Options{From: from, To: from.Add(time.Hour), Now: srv.Clock().Now()})
			require.NoError(t, err)
			sameRows(t, [][3]string{
				{"in-doubt", "job-doubt/apply", ""},
				{"unrecorded", "", issued.CardID},
				{"unrecorded", "", doubt},
			}, rep)
			for _, f := range rep.Findings {
				assert.NotEqual(t, fine.CardID, f.ResourceID, "a card the entry's answer names is tied by it")
				if f.Kind == reconcile.KindUnrecorded {
					assert.Contains(t, f.Detail, "job-failed/apply")
					assert.Contains(t, f.Detail, "job-doubt/apply")
				} else {
					assert.Contains(t, f.Detail, issued.CardID)
					assert.Contains(t, f.Detail, doubt)
				}
			}
		})
	}
}
