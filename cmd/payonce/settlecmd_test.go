package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
