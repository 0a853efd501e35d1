package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/corekit"
	gt "github.com/payonce/payonce/internal/testsupport/goldentest"
	"github.com/payonce/payonce/payoncetest"
)

// Settled by hand: not-executed lets a new reference run; succeeded with a
// result read from stdin is what the next call answers.
func TestSettleByHand(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			srv := coinepaytest.New(t)
			j := b.open(t)
			client, err := srv.Client(payonce.WithJournal(j))
			require.NoError(t, err)
			scope := client.Core().Scope()
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 10}))
			for _, ref := range []string{"job-8/apply", "job-9/apply"} {
				_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference(ref))
				require.Error(t, err)
			}
			srv.Clock().Advance(25 * time.Hour)
			c := cli{t: t, srv: srv}

			code, out, stderr := c.run(append([]string{"journal", "list", "-scope", scope}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			t.Log("\n" + out)

			code, out, stderr = c.run(append([]string{"journal", "settle", "-scope", scope, "-outcome", "not-executed",
				"-reason", "support ticket 881: no card issued", "job-8/apply"}, b.flags...)...)
			require.Equal(t, 0, code, stderr)
			t.Log("\n" + out)
			_, err = client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference("job-8/apply"))
			require.ErrorIs(t, err, payonce.ErrNotExecuted)

			result := `{"code":200,"message":"ok","data":{"card_id":"card-by-hand","header_id":"h1","package_id":"p1"}}`
			var o, e bytes.Buffer
			code = runWith(ctx, append([]string{"journal", "settle", "-scope", scope, "-outcome", "succeeded", "-result", "-",
				"-reason", "card seen in the console", "-json", "job-9/apply"}, b.flags...), &o, &e, func(string) string { return "" },
				deps{now: srv.Clock().Now, stdin: strings.NewReader(result)})
			require.Equal(t, 0, code, e.String())
			var res settleResult
			require.NoError(t, json.Unmarshal(o.Bytes(), &res))
			assert.Equal(t, "succeeded", res.Outcome)
			assert.Equal(t, "card seen in the console", res.Entry.SettleReason)
			card, err := client.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference("job-9/apply"))
			require.NoError(t, err)
			assert.Equal(t, "card-by-hand", card.CardID)
			assert.True(t, card.Meta.FromJournal)

			code, out, _ = c.run(append([]string{"journal", "list", "-json"}, b.flags...)...)
			require.Equal(t, 0, code)
			assert.JSONEq(t, "[]", out, "nothing pending")
		})
	}
}

// Bad command lines exit 2 and say why; unknown subcommands too.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"journl"}, {"journal"}, {"journal", "drop"}, {"journal", "list"},
		{"journal", "list", "-journal", t.TempDir() + "/absent.db"}, {"journal", "list", "-state", "odd", "-journal", "x.db"}} {
		var out, errb bytes.Buffer
		code := run(t.Context(), args, &out, &errb, func(string) string { return "" })
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, errb.String(), "payonce: ", "%v", args)
		assert.Empty(t, out.String(), "%v", args)
	}
}

// lostCharge creates req under reference against a new fake on a journal
// of the first backend, loses its answer (the client's lookup of it
// failing: the entry stays in doubt) and moves the fake's clock past the
// key's window; it returns the fake, the client, the journal flags and
// the environment of the payonce command.
func lostCharge(t *testing.T, req *a55.ChargeCreateRequest, reference string) (*a55test.Server, *a55.Client, []string, map[string]string) {
	t.Helper()
	b := backends(t)[0]
	srv := a55test.New(t)
	one := payoncetest.FastRetryPolicy()
	one.MaxAttempts = 1
	client, err := srv.Client(payonce.WithJournal(b.open(t)), payonce.WithRetryPolicy(one))
	require.NoError(t, err)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
	_, err = client.Charges.Create(t.Context(), req, payonce.WithReference(reference))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	srv.Clock().Advance(25 * time.Hour)
	env := map[string]string{a55.EnvClientID: srv.ClientID(), a55.EnvClientSecret: srv.ClientSecret(), a55.EnvTokenURL: srv.TokenURL(), EnvA55BaseURL: srv.URL}
	return srv, client, b.flags, env
}

// settleLookup runs payonce journal settle -lookup -json with args and
// checks that it recorded a success, found again by the next call.
func settleLookup(t *testing.T, srv *a55test.Server, client *a55.Client, req *a55.ChargeCreateRequest, reference string, args []string, env map[string]string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runWith(t.Context(), append(append([]string{"journal", "settle", "-lookup", "-json"}, args...), client.Core().Scope(), reference),
		&out, &errb, func(k string) string { return env[k] }, deps{httpClient: srv.HTTPClient(), now: srv.Clock().Now})
	require.Equal(t, 0, code, errb.String())
	var res settleResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	assert.Equal(t, "succeeded", res.Outcome)
	ch, err := client.Charges.Create(t.Context(), req, payonce.WithReference(reference))
	require.NoError(t, err)
	assert.True(t, ch.Meta.FromJournal)
	assert.Equal(t, "charge "+ch.UUID, res.Found)
	assert.Equal(t, 1, srv.Ledger().Len())
}

// An A55 charge whose answer was lost is found by -lookup with the exact
// request given as a file, and the next call answers from the journal.
func TestA55LookupWithRequestFile(t *testing.T) {
	req := a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("42.00"), Currency: payonce.BRL, TypeCharge: a55.TypeBoleto, Description: "order-77"})
	srv, client, flags, env := lostCharge(t, req, "order-77/charge")
	sent := *req // the request as sent: the client's account named the merchant and wallet
	sent.WalletUUID, sent.MerchantID = srv.WalletUUID(), srv.MerchantID()
	body, err := json.Marshal(&sent)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "charge.json")
	require.NoError(t, os.WriteFile(file, body, 0o600))
	settleLookup(t, srv, client, req, "order-77/charge", append([]string{"-request", file}, flags...), env)
}

// A card charge whose answer was lost is found by -lookup from the journal
// alone: no request file, no card anywhere, and the next call answers
// from the journal.
func TestA55LookupWithoutTheCard(t *testing.T) {
	req := a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("43.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard, Description: "order-78",
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}})
	srv, client, flags, env := lostCharge(t, req, "order-78/charge")
	settleLookup(t, srv, client, req, "order-78/charge", flags, env)
}

// goldenCLI runs the command on a golden journal against the world's
// fakes, with the golden credentials in the environment.
func goldenCLI(t *testing.T, w *gt.World, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := w.Env()
	code := runWith(t.Context(), append(args, w.Flags...), &out, &errb, func(k string) string { return env[k] },
		deps{httpClient: w.CommandHTTPClient(t), now: w.Clock.Now})
	return code, out.String(), errb.String()
}

// mapOldScopes maps a golden's old scopes to today's with the command.
func mapOldScopes(t *testing.T, w *gt.World) {
	t.Helper()
	if !w.G.OldScopes {
		return
	}
	a55Scope, cpScope := w.G.Scopes(t)
	for from, to := range map[string]string{a55Scope: gt.A55Scope, cpScope: gt.CoinepayScope(t)} {
		code, out, stderr := goldenCLI(t, w, "journal", "scopes", "-from", from, "-to", to)
		require.Equal(t, 0, code, stderr)
		t.Log(out)
	}
}

// Every golden journal's entries in doubt are settled by the operator
// command's lookup, after its old scopes are mapped: an A55 charge by its
// summary or, before summaries, by -request (whose plain fingerprint is
// verified); a Coinepay card by -header-id and -package-id. The next
// call answers from the journal; nothing is charged twice.
func TestGoldenJournalsSettledByTheCommand(t *testing.T) {
	gt.ForEach(t, nil, func(t *testing.T, w *gt.World) {
		w.Clock.Set(w.Entries[gt.RefJob2].KeyCreated.Add(25 * time.Hour))
		mapOldScopes(t, w)
		args := []string{"journal", "settle", "-lookup", "-json"}
		if !w.G.Summary {
			code, _, stderr := goldenCLI(t, w, append(args, gt.A55Scope, gt.RefOrder2)...)
			require.Equal(t, 1, code)
			assert.Contains(t, stderr, "-request", "the command names its own flag")
			assert.NotContains(t, stderr, "SettleOptions")
			assert.Equal(t, 1, strings.Count(stderr, "payonce: "), stderr)
			body, err := corekit.MarshalWire(gt.Order2) // the exact request, card and all, as the operator would have it
			require.NoError(t, err)
			file := filepath.Join(t.TempDir(), "order-2.json")
			require.NoError(t, os.WriteFile(file, body, 0o600))
			args = append(args, "-request", file)
		}
		code, out, stderr := goldenCLI(t, w, append(args, gt.A55Scope, gt.RefOrder2)...)
		require.Equal(t, 0, code, stderr)
		var res settleResult
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		assert.Equal(t, "succeeded", res.Outcome)

		code, out, stderr = goldenCLI(t, w, "journal", "settle", "-lookup", "-json", "-header-id", gt.Job2.HeaderID, "-package-id", gt.Job2.PackageID,
			gt.CoinepayScope(t), gt.RefJob2)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		assert.Equal(t, "succeeded", res.Outcome)

		ac, err := w.A55Client(t)
		require.NoError(t, err)
		ch, err := ac.Charges.Create(t.Context(), gt.Order2, payonce.WithReference(gt.RefOrder2))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		w.KeepsItsMeaning(t, gt.RefOrder2)
		cc, err := w.CoinepayClient(t)
		require.NoError(t, err)
		card, err := cc.Cards.Apply(t.Context(), gt.Job2, payonce.WithReference(gt.RefJob2))
		require.NoError(t, err)
		assert.True(t, card.Meta.FromJournal)
		w.KeepsItsMeaning(t, gt.RefJob2)
		w.NoSecondCharge(t, 0, 0)
	})
}
