package main

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/payonce/payonce/reconcile"
)

// coinepayEnv is the environment that gives the command srv's credentials.
func coinepayEnv(srv *coinepaytest.Server) map[string]string {
	return map[string]string{EnvCoinepayAPIKey: srv.APIKey(), EnvCoinepayAPISecret: srv.Secret(), EnvCoinepayBaseURL: srv.URL}
}

// spanFlags are -since and -until around from.
func spanFlags(from time.Time) []string {
	return []string{"-since", from.UTC().Format(time.RFC3339), "-until", from.Add(time.Hour).UTC().Format(time.RFC3339)}
}

// findingRows is a report's findings as kind, reference, resource.
func findingRows(fs []reconcile.Finding) [][3]string {
	out := [][3]string{}
	for _, f := range fs {
		out = append(out, [3]string{string(f.Kind), f.Reference, f.ResourceID})
	}
	return out
}

// The command reports every planted mismatch as a table, JSON and CSV,
// and exits 3; with the inbox off it leaves the inbox's finding out.
func TestReconcileCommandReportsAndExits(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := coinepaytest.New(t)
			j := b.open(t)
			client, err := srv.Client(payonce.WithJournal(j))
			require.NoError(t, err)
			plain, err := srv.Client()
			require.NoError(t, err)
			scope := client.Core().Scope()
			c := cli{t: t, srv: srv, env: coinepayEnv(srv)}
			from := srv.Clock().Now().Add(-time.Minute)
			apply := func(ref, header string) string {
				t.Helper()
				card, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: header, PackageID: "p1"}, payonce.WithReference(ref))
				require.NoError(t, err)
				return card.CardID
			}
			apply("job-fine/apply", "h1")
			stray, err := plain.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h9", PackageID: "p1"})
			require.NoError(t, err)
			a1, a2 := apply("order-7/attempt-1", "h1"), apply("order-7/attempt-2", "h1")
			frozen, heard := apply("order-9/attempt-1", "h1"), apply("order-10/attempt-1", "h1")
			for _, id := range []string{frozen, heard} {
				require.NoError(t, srv.SetCardStatus(id, "frozen"))
			}
			_, _, err = j.(journal.InboxStore).RecordEvent(ctx, payonce.InboxEvent{Scope: scope, EventID: "card/" + heard + "/frozen",
				ResourceID: heard, Type: "frozen", Body: []byte(`{}`)})
			require.NoError(t, err)
			// A lost answer, in doubt 25 h later; the operator then records
			// it as not executed: the card the fake issued under its key
			// makes it misrecorded.
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 10}))
			_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h2", PackageID: "p1"}, payonce.WithReference("job-lost/apply"))
			require.Error(t, err)
			_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h3", PackageID: "p1"}, payonce.WithReference("job-doubt/apply"))
			require.Error(t, err)
			srv.ClearFaults()
			srv.Clock().Advance(25 * time.Hour)
			code, _, stderr := c.run(append([]string{"journal", "settle", "-outcome", "not-executed", "-reason", "nothing seen", scope, "job-lost/apply"}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			var lost, doubt string
			for card, err := range plain.Cards.All(ctx, nil) {
				require.NoError(t, err)
				switch card.HeaderID {
				case "h2":
					lost = card.CardID
				case "h3":
					doubt = card.CardID
				}
			}

			args := append(append([]string{"reconcile", "-provider", "coinepay"}, spanFlags(from)...), b.flags...)
			want := [][3]string{
				{"in-doubt", "job-doubt/apply", doubt},
				{"misrecorded", "job-lost/apply", lost},
				{"two-successes", "order-7/attempt-1", a1},
				{"two-successes", "order-7/attempt-2", a2},
				{"unrecorded", "", stray.CardID},
				{"unreceived-status", "order-9/attempt-1", frozen},
			}

			code, out, stderr := c.run(append(args, "-json")...)
			require.Equal(t, exitAttention, code, stderr)
			assert.Equal(t, "payonce: reconcile: 6 findings: needs a person\n", stderr)
			var rep reconcile.Report
			require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
			assert.ElementsMatch(t, want, findingRows(rep.Findings))
			assert.True(t, rep.Inbox, "auto: the inbox holds events of the scope")
			assert.Equal(t, "coinepay", rep.Provider)
			assert.Equal(t, scope, rep.Scope)
			assert.Equal(t, 8, rep.Resources)
			assert.Equal(t, 7, rep.Entries)

			code, out, stderr = c.run(args...)
			require.Equal(t, exitAttention, code, stderr)
			t.Log("\n" + out)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			require.Len(t, lines, 2+len(want)+1, "the span, a header, a row per finding, the count")
			assert.Contains(t, lines[0], "reconcile coinepay "+scope+" cards.apply")
			assert.Contains(t, lines[0], "8 resources, 7 entries, inbox checked")
			assert.True(t, strings.HasPrefix(lines[1], "KIND"))
			for _, w := range want {
				assert.True(t, slices.ContainsFunc(lines[2:len(lines)-1], func(l string) bool {
					return strings.HasPrefix(l, w[0]) && strings.Contains(l, w[2]) && strings.Contains(l, w[1])
				}), "%v", w)
			}
			assert.Equal(t, "6 findings need a person", lines[len(lines)-1])

			code, out, stderr = c.run(append(args, "-csv")...)
			require.Equal(t, exitAttention, code, stderr)
			records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			require.NoError(t, err)
			require.Len(t, records, 1+len(want))
			assert.Equal(t, reportColumns(), records[0])
			var got [][3]string
			for _, r := range records[1:] {
				got = append(got, [3]string{r[0], r[1], r[4]})
			}
			assert.ElementsMatch(t, want, got)

			code, out, stderr = c.run(append(args, "-json", "-inbox", "off")...)
			require.Equal(t, exitAttention, code, stderr)
			rep = reconcile.Report{} // json.Unmarshal would keep an omitted field's old value
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.False(t, rep.Inbox)
			assert.ElementsMatch(t, want[:5], findingRows(rep.Findings))

			// Another order rule: no reference is an attempt of an order.
			code, out, _ = c.run(append(args, "-json", "-order-pattern", `^(.+)#[0-9]+$`)...)
			require.Equal(t, exitAttention, code)
			rep = reconcile.Report{}
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.ElementsMatch(t, slices.Concat(want[:2], want[4:]), findingRows(rep.Findings))

			// -window ends at now: the planted span is 25 h back.
			code, out, _ = c.run(append([]string{"reconcile", "-provider", "coinepay", "-window", "2h", "-json"}, b.flags...)...)
			require.Equal(t, exitAttention, code, "the entry in doubt is reported whatever the span")
			rep = reconcile.Report{}
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.Equal(t, [][3]string{{"in-doubt", "job-doubt/apply", ""}}, findingRows(rep.Findings))
			assert.Equal(t, 0, rep.Resources)
		})
	}
}

// A journal that matches the provider: exit 0, nothing needs a person.
func TestReconcileCommandCleanExitsZero(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			srv := coinepaytest.New(t)
			j := b.open(t)
			client, err := srv.Client(payonce.WithJournal(j))
			require.NoError(t, err)
			from := srv.Clock().Now().Add(-time.Minute)
			for _, ref := range []string{"order-1/attempt-1", "order-2/attempt-1"} {
				_, err := client.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference(ref))
				require.NoError(t, err)
			}
			c := cli{t: t, srv: srv, env: coinepayEnv(srv)}
			code, out, stderr := c.run(append(append([]string{"reconcile", "-provider", "coinepay"}, spanFlags(from)...), b.flags...)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			assert.Contains(t, out, "2 resources, 2 entries, inbox not checked")
			assert.Contains(t, out, "nothing needs a person")
			code, out, _ = c.run(append(append([]string{"reconcile", "-provider", "coinepay", "-json", "-inbox", "on"}, spanFlags(from)...), b.flags...)...)
			require.Equal(t, 0, code)
			var rep reconcile.Report
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.True(t, rep.Inbox)
			assert.Empty(t, rep.Findings)
			assert.NotNil(t, rep.Findings, "an empty list, not null")
		})
	}
}

// A bad command line exits 2 naming the command's own flags, before
// anything is read.
func TestReconcileCommandRefusesBadInput(t *testing.T) {
	srv := coinepaytest.New(t)
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	c := cli{t: t, srv: srv, env: coinepayEnv(srv)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-journal", path}, "-provider"},
		{[]string{"-provider", "stripe", "-journal", path}, "-provider"},
		{[]string{"-provider", "coinepay"}, "-journal"},
		{[]string{"-provider", "coinepay", "-journal", path, "-json", "-csv"}, "-json and -csv"},
		{[]string{"-provider", "coinepay", "-journal", path, "-since", "2026-12-01", "-window", "1h"}, "-since or -window"},
		{[]string{"-provider", "coinepay", "-journal", path, "-since", "yesterday"}, "-since"},
		{[]string{"-provider", "coinepay", "-journal", path, "-until", "12/01/2026"}, "-until"},
		{[]string{"-provider", "coinepay", "-journal", path, "-since", "2026-12-02", "-until", "2026-12-01"}, "-since must be before -until"},
		{[]string{"-provider", "coinepay", "-journal", path, "-window", "-1h"}, "-window"},
		{[]string{"-provider", "coinepay", "-journal", path, "-margin", "-1m"}, "-margin"},
		{[]string{"-provider", "coinepay", "-journal", path, "-order-pattern", "(a)(b)"}, "-order-pattern"},
		{[]string{"-provider", "coinepay", "-journal", path, "-order-pattern", "("}, "-order-pattern"},
		{[]string{"-provider", "coinepay", "-journal", path, "-inbox", "maybe"}, "-inbox"},
		{[]string{"-provider", "coinepay", "-journal", path, "-wallet", "w1"}, "-wallet applies to -provider a55"},
		{[]string{"-provider", "coinepay", "-journal", path, "-max-resources", "0"}, "-max-resources"},
		{[]string{"-provider", "coinepay", "-journal", path, "stray"}, "no operands"},
		{[]string{"-provider", "coinepay", "-journal", path, "-bogus"}, "-bogus"},
	} {
		code, out, stderr := c.run(append([]string{"reconcile"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, out, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
		assert.NotContains(t, stderr, "Options", "%v: a Go name", tc.args)
		assert.Contains(t, stderr, "run 'payonce -h' for usage")
	}
	noEnv := cli{t: t, srv: srv}
	code, _, stderr := noEnv.run("reconcile", "-provider", "coinepay", "-journal", path)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, EnvCoinepayAPIKey)
	code, _, stderr = noEnv.run("reconcile", "-provider", "a55", "-journal", path)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "A55_CLIENT_ID")

	code, out, _ := c.run("-h")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	code, _, stderr = c.run("bogus")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "want journal or reconcile")
}

// A provider's statuses that echo the client's own credentials (its API
// key, its secret, in any letter case) are printed without them, in
// every format: the report goes through the client's redactor.
func TestReconcileCommandCutsTheClientsOwnSecrets(t *testing.T) {
	b := backends(t)[0]
	ctx := t.Context()
	srv := coinepaytest.New(t)
	b.open(t)
	plain, err := srv.Client()
	require.NoError(t, err)
	c := cli{t: t, srv: srv, env: coinepayEnv(srv)}
	from := srv.Clock().Now().Add(-time.Minute)
	for _, status := range []string{"frozen by " + srv.Secret(), "held for " + strings.ToUpper(srv.APIKey())} {
		card, err := plain.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h9", PackageID: "p1"})
		require.NoError(t, err)
		require.NoError(t, srv.SetCardStatus(card.CardID, status))
	}
	args := append(append([]string{"reconcile", "-provider", "coinepay"}, spanFlags(from)...), b.flags...)
	for _, format := range [][]string{nil, {"-json"}, {"-csv"}} {
		code, out, stderr := c.run(append(args, format...)...)
		require.Equal(t, exitAttention, code, stderr)
		assert.Contains(t, out, "frozen by", format)
		for _, secret := range []string{srv.Secret(), srv.APIKey()} {
			assert.NotContains(t, strings.ToLower(out), strings.ToLower(secret), format)
		}
	}
}
