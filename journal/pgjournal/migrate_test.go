package pgjournal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Version 6 fills the resource ID of older rows from their stored
// answers where the operation names one and redaction left it whole (an
// answer that is not JSON, or not UTF-8, keeps none, and the migration
// goes on), and the index finds them.
func TestVersionSixFillsTheResourceOfOlderRows(t *testing.T) {
	url := os.Getenv("PAYONCE_POSTGRES_URL")
	if url == "" {
		t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL tests")
	}
	p, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "payonce_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, _ = p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	})
	table := pgx.Identifier{name, "payonce_journal"}.Sanitize()
	versions := pgx.Identifier{name, "payonce_journal_migrations"}.Sanitize()
	_, err = p.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()+"; CREATE TABLE "+versions+
		" (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
	require.NoError(t, err)
	for i := range 5 {
		_, err = p.Exec(t.Context(), strings.NewReplacer("$T", table, "$S", pgx.Identifier{name}.Sanitize()).Replace(migrations[i]))
		require.NoError(t, err, "migration %d", i+1)
		_, err = p.Exec(t.Context(), "INSERT INTO "+versions+" (version) VALUES ($1)", i+1)
		require.NoError(t, err)
	}
	rows := []struct {
		ref, operation, state string
		result                []byte
		want                  string
	}{
		{"charge", "charges.create", "succeeded", []byte(`{"charge_uuid":"4f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4","status":"confirmed"}`), "4f1c2b1e-3d4a-4b5c-8d6e-7f8091a2b3c4"},
		{"declined", "charges.create", "failed", []byte(`{"charge_uuid":"ch_declined","status":"error"}`), "ch_declined"},
		{"card", "cards.apply", "succeeded", []byte(`{"code":200,"message":"ok","data":{"card_id":"card_830186349586224382650c29"}}`), "card_830186349586224382650c29"},
		{"recharge", "cards.recharge", "succeeded", []byte(`{"code":200,"data":{"recharge_id":"rch_1","card_id":"card_1"}}`), "rch_1"},
		{"pending", "charges.create", "pending", []byte(`{"charge_uuid":"ch_pending"}`), ""},
		{"masked", "charges.create", "succeeded", []byte(`{"charge_uuid":"***************0005"}`), ""},
		{"redacted", "cards.apply", "succeeded", []byte(`{"data":{"card_id":"[REDACTED]"}}`), ""},
		{"number", "charges.create", "succeeded", []byte(`{"charge_uuid":4111}`), ""},
		{"not-json", "charges.create", "succeeded", []byte(`charge_uuid: ch_x`), ""},
		{"not-utf8", "charges.create", "succeeded", []byte("{\"charge_uuid\":\"ch_\xff\"}"), ""},
		{"nul", "charges.create", "succeeded", []byte(`{"charge_uuid":"ch_\u0000"}`), ""},
		{"array", "cards.apply", "succeeded", []byte(`[{"data":{"card_id":"card_2"}}]`), ""},
		{"wallet", "wallets.create", "succeeded", []byte(`{"wallet_uuid":"w_1"}`), ""},
	}
	for _, r := range rows {
		_, err = p.Exec(t.Context(), `INSERT INTO `+table+` (scope, reference, operation, idem_key, key_created, fingerprint, state, result, created_at, updated_at)
			VALUES ('s', $1, $2, 'k', now(), 'f', $3, $4, now(), now())`, r.ref, r.operation, r.state, r.result)
		require.NoError(t, err, r.ref)
	}

	j, err := New(t.Context(), p, WithSchema(name))
	require.NoError(t, err)
	t.Cleanup(j.Close)
	for _, r := range rows {
		e, err := j.Get(t.Context(), "s", r.ref)
		require.NoError(t, err)
		assert.Equal(t, r.want, e.ResourceID, r.ref)
		if r.want != "" {
			got, err := j.Holders(t.Context(), "s", r.want)
			require.NoError(t, err)
			require.Len(t, got, 1, r.ref)
			assert.Equal(t, r.ref, got[0].Reference)
		}
	}
	var fn int
	require.NoError(t, p.QueryRow(t.Context(), `SELECT count(*) FROM pg_proc WHERE proname = 'payonce_resource_id'`).Scan(&fn))
	assert.Zero(t, fn, "the migration leaves no function behind")
}
