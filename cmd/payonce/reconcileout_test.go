package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/reconcile"
)

// What the journal or the provider holds is printed escaped: a reference
// holding terminal controls cannot forge a line or reorder one, JSON
// reads back the stored text, and a CSV field cannot start a formula.
func TestReconcileCommandEscapesWhatItPrints(t *testing.T) {
	srv := coinepaytest.New(t)
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	client, err := srv.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	from := srv.Clock().Now().Add(-time.Minute)
	for _, ref := range []string{"o-1", "o-2"} {
		_, err = client.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}, payonce.WithReference(ref))
		require.NoError(t, err)
	}
	// Rows written by an older client, or straight into the database,
	// whose cards the provider does not have.
	const ref, formula = "o-1\u202etxt.exe\r\x1b[2K\x07", "=HYPERLINK(\"http://x\")"
	_, err = j.DB().ExecContext(t.Context(), `UPDATE payonce_journal SET reference = ?, result = ?, resource_id = ? WHERE reference = 'o-1'`,
		ref, `{"code":200,"data":{"card_id":"card_gone\u0085","status":"active"}}`, "card_gone\u0085")
	require.NoError(t, err)
	_, err = j.DB().ExecContext(t.Context(), `UPDATE payonce_journal SET reference = ?, result = ?, resource_id = ? WHERE reference = 'o-2'`,
		formula, `{"code":200,"data":{"card_id":"-card","status":"active"}}`, "-card")
	require.NoError(t, err)
	require.NoError(t, j.Close())
	c := cli{t: t, srv: srv, env: coinepayEnv(srv)}
	args := append(append([]string{"reconcile", "-provider", "coinepay", "-journal", path}, spanFlags(from)...), "-inbox", "off")
	raw := []string{"\x1b", "\x07", "\r", "\u0085", "\u202e"}

	code, out, stderr := c.run(args...)
	require.Equal(t, exitAttention, code, stderr)
	for _, r := range raw {
		assert.NotContains(t, out, r)
	}
	assert.Contains(t, out, `"o-1\u202etxt.exe\r\x1b[2K\a"`)
	// One finding each: the card the fake made under the entry's key is
	// not the one it names.
	assert.Equal(t, 2+2+1, strings.Count(out, "\n"), "no forged line")

	code, out, _ = c.run(append(args, "-json")...)
	require.Equal(t, exitAttention, code)
	for _, r := range raw {
		assert.NotContains(t, out, r)
	}
	var rep reconcile.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	refs := []string{}
	for _, f := range rep.Findings {
		refs = append(refs, f.Reference)
	}
	assert.ElementsMatch(t, []string{ref, formula}, refs, "JSON reads back the stored text")

	code, out, _ = c.run(append(args, "-csv")...)
	require.Equal(t, exitAttention, code)
	for _, r := range raw {
		assert.NotContains(t, out, r)
	}
	records, err := csv.NewReader(bytes.NewReader([]byte(out))).ReadAll()
	require.NoError(t, err)
	for _, r := range records[1:] {
		for _, cell := range r {
			if cell != "" {
				assert.NotContains(t, "=+-@", cell[:1], "a field that starts a formula: %q", cell)
			}
		}
	}
}
