package fakeserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

const benchAnswer = `{"charge_uuid":"3f1c2a9e-0d7b-4c51-9a1e-6b2f1e8d4c70","status":"confirmed","amount":"100.00","currency":"BRL"}`

const benchBody = `{"amount":"100.00","currency":"BRL","type_charge":"credit_card","payer":{"name":"TEST","email":"t@example.com"}}`

// benchBackend is a minimal provider: one keyed POST answering benchAnswer.
type benchBackend struct{ e *fakeserver.Engine }

func (b benchBackend) Route(method, path string) (fakeserver.Route, fakeserver.Problem) {
	if path != "/charge" {
		return fakeserver.Route{}, fakeserver.ProblemNotFound
	}
	return fakeserver.Route{Kind: "charge.create", Keyed: true, Handle: func(r *fakeserver.Request) fakeserver.Response {
		b.e.Record(fakeserver.Operation{Provider: "bench", Kind: "charge.create", IdempotencyKey: r.Key})
		return fakeserver.Response{Status: 200, Body: []byte(benchAnswer)}
	}}, fakeserver.ProblemNone
}
func (benchBackend) Authenticate(r *fakeserver.Request) *fakeserver.Response {
	r.Credential = "c"
	return nil
}
func (benchBackend) Problem(p fakeserver.Problem, status int, _ string) fakeserver.Response {
	return fakeserver.JSON(p.Status(), map[string]int{"code": p.Status()})
}
func (benchBackend) Decorate(http.Header, *fakeserver.Request) {}

// BenchmarkFakeKeyedPOST compares keyed POSTs (a new key each, so every
// request executes and is stored) against the engine with a bare net/http
// handler answering the same JSON, over loopback HTTP/1.1 with keep-alive.
func BenchmarkFakeKeyedPOST(b *testing.B) {
	e := fakeserver.New(fakeserver.Options{AttemptLogSize: 1024})
	fake := httptest.NewServer(e.Handler(fakeserver.ProviderConfig{Name: "bench", Rules: fakeserver.KeyRules{MinLen: 16, MaxLen: 128}}, benchBackend{e}))
	defer fake.Close()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(benchAnswer))
	}))
	defer bare.Close()
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
	}{{"fake", fake}, {"bare", bare}} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.srv.Client()
			i := 0
			for b.Loop() {
				i++
				req, _ := http.NewRequest(http.MethodPost, tc.srv.URL+"/charge", strings.NewReader(benchBody))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(fakeserver.HeaderIdempotencyKey, fmt.Sprintf("bench-key-%016d", i))
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkStoreFixedClock runs 20,000 keyed operations on a fixed clock,
// the set-up of tests on the fake clock: the store must not sweep every
// entry on every request while time stands still.
func BenchmarkStoreFixedClock(b *testing.B) {
	for b.Loop() {
		clk := fakeserver.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		s := fakeserver.NewStore(fakeserver.StoreConfig{Clock: clk})
		ok := func() fakeserver.Response { return fakeserver.Response{Status: 200, Body: []byte(benchAnswer)} }
		for i := range 20000 {
			_, _, _ = s.Do(context.Background(), "c", strconv.Itoa(i), fakeserver.Fingerprint{}, ok)
		}
	}
}
