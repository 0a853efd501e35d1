package journal_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// benchServer is a loopback provider answering every charge with 200.
func benchServer(b *testing.B) (string, *payonce.Request) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"charge_uuid":"ch_1","status":"confirmed","card":{"number":"************1111"}}`)
	}))
	b.Cleanup(srv.Close)
	return srv.URL, &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge/",
		Body: map[string]string{"amount": "100.00", "currency": "BRL"}, Keyed: true}
}

// BenchmarkOperation runs one keyed operation (a POST answered 200 by a
// loopback server) per iteration with no journal and with each backend:
// the difference is the journal's cost (Reserve before, Update after).
func BenchmarkOperation(b *testing.B) {
	url, req := benchServer(b)
	benchBackends(b, func(b *testing.B, j journal.Store) { runBench(b, url, req, j, false) })
}

// BenchmarkOperationParallel is BenchmarkOperation with 4×GOMAXPROCS
// concurrent callers: the journals' throughput under concurrency.
func BenchmarkOperationParallel(b *testing.B) {
	url, req := benchServer(b)
	benchBackends(b, func(b *testing.B, j journal.Store) { runBench(b, url, req, j, true) })
}

// BenchmarkOperationWithEarlierScopes is BenchmarkOperation for a client
// whose scope had two earlier forms (as a Coinepay client's has): each
// new reservation reads its reference under both, by primary key, before
// its first byte. Its ratio to BenchmarkOperation is the check's cost.
func BenchmarkOperationWithEarlierScopes(b *testing.B) {
	url, req := benchServer(b)
	benchBackends(b, func(b *testing.B, j journal.Store) {
		runBench(b, url, req, j, false, payonce.WithProvider(benchProvider("bench-earlier", "bench-earliest")))
	})
}

func runBench(b *testing.B, url string, req *payonce.Request, j journal.Store, parallel bool, extra ...payonce.Option) {
	opts := []payonce.Option{payonce.WithBaseURL(url), payonce.WithProvider(benchProvider()), payonce.WithScope("bench"),
		payonce.WithRetryBudget(nil)}
	opts = append(opts, extra...)
	if j != nil {
		opts = append(opts, payonce.WithJournal(j))
	}
	c, err := payonce.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	prefix := fmt.Sprintf("%d", time.Now().UnixNano())
	var n atomic.Int64
	one := func() error {
		var call []payonce.CallOption
		if j != nil {
			call = append(call, payonce.WithReference(fmt.Sprintf("%s-%d", prefix, n.Add(1))))
		}
		_, err := c.Do(context.Background(), req, nil, call...)
		return err
	}
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := one(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		return
	}
	for b.Loop() {
		if err := one(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchBackends(b *testing.B, run func(b *testing.B, j journal.Store)) {
	b.Run("none", func(b *testing.B) { run(b, nil) })
	b.Run("memory", func(b *testing.B) { run(b, journal.NewMemory()) })
	b.Run("sqlite", func(b *testing.B) {
		j, err := sqlitejournal.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		run(b, j)
	})
	b.Run("sqlite-normal", func(b *testing.B) {
		j, err := sqlitejournal.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), sqlitejournal.WithSynchronousNormal())
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		run(b, j)
	})
	b.Run("postgres", func(b *testing.B) {
		url := os.Getenv("PAYONCE_POSTGRES_URL")
		if url == "" {
			b.Skip("PAYONCE_POSTGRES_URL is not set")
		}
		schema := fmt.Sprintf("payonce_bench_%d", time.Now().UnixNano())
		j, err := pgjournal.Open(b.Context(), url, pgjournal.WithSchema(schema))
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		defer func() { _, _ = j.Pool().Exec(b.Context(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE") }()
		run(b, j)
	})
}

// benchProvider is a provider with A55's key rules and the earlier
// scopes legacy.
func benchProvider(legacy ...string) payonce.Provider {
	return payonce.Provider{KeyRules: payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: payonce.DefaultKeyWindow}, LegacyScopes: legacy}
}
