package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	gt "github.com/payonce/payonce/internal/testsupport/goldentest"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// A journal written before scopes named the origin: the lookup client of
// today refuses it, naming the scopes command, not a Go option; scopes
// shows the old scopes with their entries and moves them into today's.
func TestScopesMovesAGoldensOldScopes(t *testing.T) {
	gt.ForEach(t, func(g gt.Golden) bool { return g.OldScopes }, func(t *testing.T, w *gt.World) {
		a55Old, cpOld := w.G.Scopes(t)
		code, _, stderr := goldenCLI(t, w, "journal", "settle", "-lookup", a55Old, gt.RefOrder2)
		require.Equal(t, 1, code)
		assert.Contains(t, stderr, "payonce journal scopes -journal <journal> -from \""+a55Old+"\" -to \""+gt.A55Scope+"\"")
		assert.NotContains(t, stderr, "WithLegacyScopes")
		assert.Equal(t, 1, strings.Count(stderr, "payonce: "), stderr)
		code, _, stderr = goldenCLI(t, w, "journal", "show", gt.A55Scope, gt.RefOrder2)
		require.Equal(t, 1, code)
		assert.Contains(t, stderr, "the reference is under scope \""+a55Old+"\"", "a reference not found is looked for in every scope")

		code, out, stderr := goldenCLI(t, w, "journal", "scopes", "-json")
		require.Equal(t, 0, code, stderr)
		var res scopesResult
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		assert.ElementsMatch(t, []payonce.ScopeCount{{Scope: a55Old, Pending: 1, Settled: 2}, {Scope: cpOld, Pending: 1, Settled: 1}}, res.Scopes)

		code, out, stderr = goldenCLI(t, w, "journal", "scopes", "-from", a55Old, "-to", gt.A55Scope)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "moved 3 entries from scope "+a55Old+" to "+gt.A55Scope)
		code, out, stderr = goldenCLI(t, w, "journal", "scopes", "-json", "-from", cpOld, "-to", gt.CoinepayScope(t))
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		assert.Equal(t, &moveResult{From: cpOld, To: gt.CoinepayScope(t), Entries: 2}, res.Moved)
		assert.ElementsMatch(t, []payonce.ScopeCount{{Scope: gt.A55Scope, Pending: 1, Settled: 2}, {Scope: gt.CoinepayScope(t), Pending: 1, Settled: 1}}, res.Scopes)
		for _, ref := range []string{gt.RefOrder1, gt.RefOrder2, gt.RefOrder3, gt.RefJob1, gt.RefJob2} {
			e := w.Current(t, ref)
			assert.Equal(t, w.Entries[ref].Key, e.Key, "%s keeps its meaning", ref)
			assert.Equal(t, w.Entries[ref].State, e.State, ref)
		}
		w.NoSecondCharge(t, 0, 0)
	})
}

// A reference both scopes hold is refused: nothing moves, and the error
// names the reference.
func TestScopesRefusesACollision(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j := b.open(t)
			sent := journaltest.Entry("new", "r2") // may have run: no entry gives way to another
			sent.Sent, sent.Attempts = true, 1
			for _, e := range []payonce.JournalEntry{journaltest.Entry("old", "r1"), journaltest.Entry("old", "r2"), sent} {
				_, _, err := j.Reserve(t.Context(), e)
				require.NoError(t, err)
			}
			code, _, stderr := plainRun(t, append([]string{"journal", "scopes", "-from", "old", "-to", "new"}, b.flags...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, `both hold reference "r2"`)
			assert.Contains(t, stderr, "nothing moved")
			_, err := j.Get(t.Context(), "old", "r1")
			require.NoError(t, err, "nothing moved")
		})
	}
}

// A scope that would drive the terminal is printed quoted.
func TestScopesPrintsScopesEscaped(t *testing.T) {
	b := backends(t)[0]
	j := b.open(t).(*sqlitejournal.Journal)
	// The journal refuses such names (Reserve); rows an older version
	// wrote, or a hand edit, can still hold them.
	for i, s := range []string{"a55:\x1b[2Jx", "shop\u202eevil", "plain"} {
		ref := fmt.Sprintf("r%d", i)
		_, _, err := j.Reserve(t.Context(), journaltest.Entry("placeholder", ref))
		require.NoError(t, err)
		_, err = j.DB().ExecContext(t.Context(), `UPDATE payonce_journal SET scope = ? WHERE reference = ?`, s, ref)
		require.NoError(t, err)
	}
	code, out, stderr := plainRun(t, append([]string{"journal", "scopes"}, b.flags...)...)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\u202e")
	assert.Contains(t, out, `"a55:\x1b[2Jx"`)
	assert.Contains(t, out, `shop\u202eevil`)
	assert.Contains(t, out, "plain ")
}

func TestScopesUsage(t *testing.T) {
	b := backends(t)[0]
	b.open(t)
	for _, args := range [][]string{{"-from", "old"}, {"-to", "new"}, {"-from", "a", "-to", "a"}, {"operand"}} {
		code, out, stderr := plainRun(t, append(append([]string{"journal", "scopes"}, args...), b.flags...)...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, stderr, "payonce: ", "%v", args)
		assert.Empty(t, out)
	}
}

// plainRun runs the command with no provider in reach.
func plainRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runWith(t.Context(), args, &out, &errb, func(string) string { return "" }, deps{})
	return code, out.String(), errb.String()
}

// -to must be a scope a client can record under: one whose origin is
// written as clients write it (scheme and host lower-cased, no default
// port, no path). A move into "…@https://API.a55.tech/" would put the
// entries where no client looks, and each of their references would run
// again. Refused as a usage error naming the client's form; nothing
// moved.
func TestScopesRefusesAToNoClientRecordsUnder(t *testing.T) {
	b := backends(t)[0]
	j := b.open(t)
	_, _, err := j.Reserve(t.Context(), journaltest.Entry("a55:client-1", "order-1/attempt-1"))
	require.NoError(t, err)
	const want = "a55:client-1@https://api.a55.tech"
	for _, to := range []string{
		"a55:client-1@https://API.a55.tech",
		"a55:client-1@https://api.a55.tech/",
		"a55:client-1@https://api.a55.tech:443",
		"a55:client-1@HTTPS://api.a55.tech",
		"a55:client-1@https://api.a55.tech/api/v1",
	} {
		code, _, stderr := plainRun(t, append([]string{"journal", "scopes", "-from", "a55:client-1", "-to", to}, b.flags...)...)
		assert.Equal(t, 2, code, to)
		assert.Contains(t, stderr, want, to)
		_, err := j.Get(t.Context(), "a55:client-1", "order-1/attempt-1")
		require.NoError(t, err, "%s: nothing moved", to)
	}
	code, _, stderr := plainRun(t, append([]string{"journal", "scopes", "-from", "a55:client-1", "-to", want}, b.flags...)...)
	require.Equal(t, 0, code, stderr)
	_, err = j.Get(t.Context(), want, "order-1/attempt-1")
	require.NoError(t, err)
}
