package journal_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/payoncetest"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rowRecorder is the memory backend of the row checks: it keeps every entry
// written to or read from the journal, so that its dump shows all it held.
type rowRecorder struct {
	journal.Store
	mu   sync.Mutex
	seen []payonce.JournalEntry
}

func (r *rowRecorder) keep(es ...payonce.JournalEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, es...)
}

func (r *rowRecorder) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	got, created, err := r.Store.Reserve(ctx, e)
	r.keep(e, got)
	return got, created, err
}

func (r *rowRecorder) Update(ctx context.Context, e payonce.JournalEntry) error {
	r.keep(e)
	return r.Store.Update(ctx, e)
}

func (r *rowRecorder) Get(ctx context.Context, scope, reference string) (payonce.JournalEntry, error) {
	got, err := r.Store.Get(ctx, scope, reference)
	r.keep(got)
	return got, err
}

// Holders and LookAlikes pass the memory journal's payonce.JournalFinder
// on, keeping what they read.
func (r *rowRecorder) Holders(ctx context.Context, scope, resourceID string) ([]payonce.JournalEntry, error) {
	got, err := r.Store.(payonce.JournalFinder).Holders(ctx, scope, resourceID)
	r.keep(got...)
	return got, err
}

func (r *rowRecorder) LookAlikes(ctx context.Context, q payonce.LookAlikeQuery) ([]payonce.JournalEntry, error) {
	got, err := r.Store.(payonce.JournalFinder).LookAlikes(ctx, q)
	r.keep(got...)
	return got, err
}

func dumpMemory(t *testing.T, j journal.Store) string {
	t.Helper()
	r := j.(*rowRecorder)
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.seen {
		fmt.Fprintf(&b, "%#v %s\n", e, e.Result)
	}
	return b.String()
}

func dumpSQLite(t *testing.T, j journal.Store) string {
	t.Helper()
	db := j.(*sqlitejournal.Journal).DB()
	rows, err := db.QueryContext(t.Context(), "SELECT * FROM payonce_journal")
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var b strings.Builder
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%s|", cols[i], v)
		}
		b.WriteByte('\n')
	}
	require.NoError(t, rows.Err())
	return b.String()
}

func dumpPostgres(t *testing.T, j journal.Store) string {
	t.Helper()
	pj := j.(*pgjournal.Journal)
	rows, err := pj.Pool().Query(t.Context(), "SELECT t::text, encode(t.result, 'escape') FROM "+pgx.Identifier{pj.Schema(), "payonce_journal"}.Sanitize()+" t")
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var row string
		var result *string
		require.NoError(t, rows.Scan(&row, &result))
		b.WriteString(row)
		if result != nil {
			b.WriteString(*result)
		}
		b.WriteByte('\n')
	}
	require.NoError(t, rows.Err())
	return b.String()
}

const hostileToken = "tok-SECRET-abc123"

// hostile is a server that echoes everything it receives, the card and the
// bearer token included, in successes and in error messages.
func hostile(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		var echo any
		_ = json.Unmarshal(body, &echo)
		switch r.Header.Get(corekit.HeaderIdempotencyKey) {
		case "hostile-ok-key-0001":
			_ = json.NewEncoder(w).Encode(map[string]any{"charge_uuid": "ch_h1", "status": "confirmed", "echo": echo, "authorization": auth,
				"card": map[string]any{"number": "4111111111111111", "cvv": "987", "last4": "1111"}, "note": "card 4111 1111 1111 1111 token=" + hostileToken,
				"raw": string(body), "pan_number": 4111111111111111})
		case "hostile-400-key-0001":
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": "INVALID_CARD " + string(body),
				"message": "refused " + string(body) + " with " + auth}})
		case "hostile-503-key-0001":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"code":"INTERNAL_ERROR","message":"down `+strings.ReplaceAll(string(body), `"`, `'`)+` `+auth+`"}}`)
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"charge_uuid": "ch_h2", "status": "declined", "echo": echo,
				"message": []map[string]any{{"code": "CARD_DECLINED", "message": "declined " + string(body) + " " + auth}}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// No journal row, in any column of any backend, holds a card number, a
// CVV, a secret or a token after charges with cards through the A55 client,
// from the fake and from a hostile server that echoes them back.
func TestNoJournalRowHoldsCardDataOrSecrets(t *testing.T) {
	cvv := regexp.MustCompile(`(?i)(cvv|cvc)\W{0,6}987|["':= ]987["'\s,}]`)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j, _ := b.open(t)
			ctx := t.Context()

			fake := a55test.New(t)
			c := a55Client(t, fake, j)
			_, err := c.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference("fake-ok"))
			require.NoError(t, err)
			_, err = c.Charges.Create(ctx, chargeRequest("4000000000000002"), payonce.WithReference("fake-declined"))
			require.ErrorIs(t, err, a55.ErrCardDeclined)

			h := hostile(t)
			hc, err := a55.NewClient(a55.AccessToken(hostileToken), payonce.WithBaseURL(h.URL), payonce.WithJournal(j),
				payonce.WithScope("a55:hostile"), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
			require.NoError(t, err)
			hc = hc.WithAccount(a55.Account{MerchantID: "mer_hostile", WalletUUID: "wal_hostile"})
			for ref, key := range map[string]string{"hostile-ok": "hostile-ok-key-0001", "hostile-400": "hostile-400-key-0001",
				"hostile-503": "hostile-503-key-0001", "hostile-declined-2xx": "hostile-dec-key-0001"} {
				_, _ = hc.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference(ref), payonce.WithKey(keytest.Now(t, key)))
			}
			for _, ref := range []string{"hostile-ok", "hostile-400", "hostile-503", "hostile-declined-2xx"} {
				_, err := j.Get(ctx, "a55:hostile", ref)
				require.NoError(t, err, ref)
			}

			dump := b.dump(t, j)
			require.Contains(t, dump, "hostile-ok")
			require.Contains(t, dump, "fake-declined")
			for _, secret := range []string{"4111111111111111", "4000000000000002", "4111 1111 1111 1111", hostileToken, fake.ClientSecret()} {
				assert.NotContains(t, dump, secret)
			}
			assert.Empty(t, cvv.FindAllString(dump, -1), "no CVV")
			assert.NotRegexp(t, `\b4111\d{8,}`, dump)
		})
	}
}
