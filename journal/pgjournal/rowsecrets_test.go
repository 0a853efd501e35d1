package pgjournal_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payonce/payonce/payoncetest"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A hostile server puts a token, a query string or a named secret in an
// identifier field, or a card number as escaped digits in a text, a code
// or a message: the PostgreSQL row, read with SQL, holds none of them.
func TestRowHoldsNoSecretInIDOrEscapedDigits(t *testing.T) {
	p := pool(t)
	name := schema(t, p)
	j, err := pgjournal.New(t.Context(), p, pgjournal.WithSchema(name))
	require.NoError(t, err)
	esc := strings.Repeat(`\\u0031`, 15)
	bodies := []struct {
		status int
		body   string
	}{
		{200, `{"id":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl","status":"confirmed"}`},
		{200, `{"id":"ch_1?access_token=tok_pg_1","status":"confirmed"}`},
		{200, `{"request_id":"cvv=987","note":"pan \\u0034` + esc + `"}`},
		{400, `{"error":{"code":"\\u0034` + esc + `","message":"pan \\u0034` + esc + `"}}`},
	}
	for i, b := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(b.status)
			_, _ = io.WriteString(w, b.body)
		}))
		c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithJournal(j), payonce.WithScope("pg-rows"),
			payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
		require.NoError(t, err)
		req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge", Body: map[string]string{"amount": "1.00"}, Keyed: true}
		_, _ = c.Do(t.Context(), req, nil, payonce.WithReference(fmt.Sprint("r", i)), payonce.WithKey(keytest.Now(t, fmt.Sprintf("pg-row-key-%04d-abcdef", i))))
		srv.Close()
	}
	rows, err := p.Query(t.Context(), `SELECT path || '|' || COALESCE(convert_from(result, 'UTF8'), '') || '|' || request_id || '|' ||
		error_code || '|' || error_message || '|' || last_cause FROM `+pgx.Identifier{name, "payonce_journal"}.Sanitize())
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, all, len(bodies))
	for _, row := range all {
		for _, needle := range []string{"eyJzdWIi", "tok_pg_1", "987", `u0031\u0031\u0031\u0031`, "411111111111"} {
			assert.NotContains(t, strings.ReplaceAll(row, `\\`, `\`), needle)
		}
	}
}
