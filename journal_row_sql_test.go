package payonce_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/keytest"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A hostile server puts a token, a query string, URL credentials or a
// named secret in an identifier field (id, charge_id, request_id), or
// writes a card number as escaped digits ("\\u0034\\u0031...", JSON
// quoted in JSON) in a text, a code or a message: the SQLite row, read
// with SQL, holds none of them.
func TestJournalSQLRowHoldsNoSecretInIDOrEscapedDigits(t *testing.T) {
	esc := `\\u0034\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031`
	bodies := []struct {
		status int
		body   string
	}{
		{200, `{"id":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl","status":"confirmed"}`},
		{200, `{"id":"ch_1?access_token=tok_probe_1","status":"confirmed"}`},
		{200, `{"charge_id":"https://u:pw_probe@x.example/","status":"confirmed"}`},
		{200, `{"request_id":"cvv=987","status":"confirmed"}`},
		{200, `{"id":"ch_1","note":"pan ` + esc + `"}`},
		{400, `{"error":{"code":"INVALID","message":"pan ` + esc + `"}}`},
		{400, `{"error":{"code":"` + esc + `","message":"bad"}}`},
		{200, `{"id":"ch_1","note":"\u0034\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031"}`},
		{200, `{"id":"ch_NDExMTExMTExMTExMTExMQ","note":"%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31"}`},
		{200, `{"id":"ch_1","digits":[4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"note":"&#52;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;"}`},
		{400, `{"error":{"code":"NDExMTExMTExMTExMTExMQ==","message":"body eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIn0"}}`},
		{400, `{"error":{"code":"4111|1111|1111|1111","message":"pan 4111:1111:1111:1111"}}`},
	}
	for i, b := range bodies {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(b.status)
				_, _ = io.WriteString(w, b.body)
			})
			j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "j.db"))
			require.NoError(t, err)
			defer j.Close()
			c := journalClient(t, s, j, newClock())
			_, _ = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("r"), payonce.WithKey(keytest.Key(t, "sqlrow-key-0001-abcdef", newClock().Now())))
			var row string
			require.NoError(t, j.DB().QueryRowContext(t.Context(), `SELECT path||'|'||CAST(COALESCE(result,'') AS TEXT)||'|'||request_id||'|'||error_code||'|'||error_message||'|'||last_cause FROM payonce_journal`).Scan(&row))
			for _, n := range []string{"eyJzdWIi", "tok_probe_1", "pw_probe", "987", `u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031`, "411111111111",
				"%34%31%31%31", "NDExMTExMTEx", "&#52;&#49;", "1,1,1,1,1", "eyJudW1iZXIi", "4111|1111", "4111:1111"} {
				assert.NotContains(t, strings.ReplaceAll(row, `\\`, `\`), strings.ReplaceAll(n, `\\`, `\`))
			}
		})
	}
}
