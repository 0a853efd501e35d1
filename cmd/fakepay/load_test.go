package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// loadConcurrency is how many requests the load generator keeps in flight.
const loadConcurrency = 32

// loadRound is how many requests one round sends to each server.
const loadRound = 2000

// bareAnswer is what the bare handler answers: the fake's charge, field
// for field, so that both send the same bytes.
type bareAnswer struct {
	UUID             string          `json:"charge_uuid"`
	WalletUUID       string          `json:"wallet_uuid"`
	MerchantID       string          `json:"merchant_id"`
	Status           string          `json:"status"`
	Message          []string        `json:"message"`
	TypeCharge       string          `json:"type_charge"`
	Currency         string          `json:"currency"`
	LocalCurrency    json.RawMessage `json:"local_currency"`
	Amount           json.RawMessage `json:"amount"`
	AmountRemaining  json.RawMessage `json:"amount_remaining"`
	InstallmentValue json.RawMessage `json:"installment_value"`
	InstallmentCount int             `json:"installment_count"`
	TransactionRef   string          `json:"transaction_reference"`
	CreatedAt        time.Time       `json:"created_at"`
	UpdatedAt        time.Time       `json:"updated_at"`
	IdempotencyKey   string          `json:"idempotency_key,omitempty"`
}

// bareRequest is the idempotency guide's charge body, as the bare
// handler parses it (its own type: the SDK's may change).
type bareRequest struct {
	Amount     string `json:"amount"`
	Currency   string `json:"currency"`
	TypeCharge string `json:"type_charge"`
	Card       *struct {
		Number, HolderName, ExpirationMonth, ExpirationYear, CVV string
	} `json:"card"`
	Payer json.RawMessage `json:"payer"`
}

// bareHandler is what the fake is measured against: a net/http handler
// that reads and parses the same JSON and answers a charge of the fake's
// shape, with the fake's headers, and nothing else (no idempotency,
// ledger, log, validation or faults).
func bareHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req bareRequest
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, fakeserver.MaxRequestBody))
		if err != nil || json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		amount := json.RawMessage(req.Amount)
		now := time.Now().UTC()
		out, _ := json.Marshal(bareAnswer{UUID: "3f1c2a9e-0d7b-4c51-9a1e-6b2f1e8d4c70", WalletUUID: "0c9e6f2a-5b1d-4e8a-9c3f-7a2b1d0e4f60",
			MerchantID: "6ba7b810-9dad-41d1-80b4-00c04fd430c8", Status: "confirmed", Message: []string{}, TypeCharge: req.TypeCharge,
			Currency: req.Currency, LocalCurrency: amount, Amount: amount, AmountRemaining: amount, InstallmentValue: amount,
			InstallmentCount: 1, TransactionRef: "txn_5f0e3c1a9b7d2e4f6a8c0b1d", CreatedAt: now, UpdatedAt: now,
			IdempotencyKey: r.Header.Get("Idempotency-Key")})
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Request-Id", "req_5f0e3c1a9b7d2e4f6a8c0b1d")
		_, _ = w.Write(out)
	})
}

// loadTarget is one server under load and what it has served.
type loadTarget struct {
	name    string
	srv     *httptest.Server
	client  *http.Client
	token   string
	elapsed time.Duration
	cpu     time.Duration // the process's CPU time during the rounds
	served  int
}

// round sends n keyed charge creations, loadConcurrency at a time, each
// with a new key, and adds the time they took.
func (lt *loadTarget) round(b *testing.B, n int, keys *atomic.Int64) {
	var wg sync.WaitGroup
	var failed atomic.Value
	next := atomic.Int64{}
	cpu0, _ := processCPU()
	start := time.Now()
	for range loadConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				req, _ := http.NewRequest(http.MethodPost, lt.srv.URL+chargePath, strings.NewReader(guideCharge))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+lt.token)
				req.Header.Set(fakeserver.HeaderIdempotencyKey, fmt.Sprintf("load-key-%020d", keys.Add(1)))
				resp, err := lt.client.Do(req)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 {
					failed.Store(fmt.Sprintf("%s: HTTP %d", lt.name, resp.StatusCode))
					return
				}
			}
		}()
	}
	wg.Wait()
	lt.elapsed += time.Since(start)
	cpu1, _ := processCPU()
	lt.cpu += cpu1 - cpu0
	lt.served += n
	if msg := failed.Load(); msg != nil {
		b.Fatal(msg)
	}
}

func (lt *loadTarget) perSecond() float64 { return float64(lt.served) / lt.elapsed.Seconds() }

// perCPUSecond is how many requests a second of the process's CPU served
// (client and server together): what perSecond would be on a machine
// doing nothing else. Other processes' load leaves it alone.
func (lt *loadTarget) perCPUSecond() float64 { return float64(lt.served) / lt.cpu.Seconds() }

// BenchmarkFakepayVsBare is the fake's load test: fakepay's handler (as
// `fakepay -a55-rate-limit 0` serves it) and a bare net/http handler
// parsing the same JSON take keyed A55 charge creations at concurrency
// 32, in interleaved rounds of 2000 requests each (one round of each per
// iteration, their order alternating), so that both see the same machine
// load. It reports both rates and fake/bare, the ratio the fake keeps,
// and cpu-fake/bare, the same ratio per second of the process's CPU
// time, which other processes' load moves far less (on a machine doing
// nothing else the two agree):
//
//	go test -run '^$' -bench FakepayVsBare -benchtime 10x ./cmd/fakepay
func BenchmarkFakepayVsBare(b *testing.B) {
	h, token := handlerWithToken(b)
	targets := []*loadTarget{{name: "fake"}, {name: "bare"}}
	for i, handler := range []http.Handler{h, bareHandler()} {
		srv := httptest.NewUnstartedServer(handler)
		fakeserver.Harden(srv.Config)
		srv.Start()
		defer srv.Close()
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = loadConcurrency
		targets[i].srv, targets[i].client = srv, &http.Client{Transport: tr}
	}
	targets[0].token, targets[1].token = token, token
	var keys atomic.Int64
	for _, lt := range targets { // warm up the connections
		lt.round(b, loadConcurrency*4, &keys)
		lt.elapsed, lt.cpu, lt.served = 0, 0, 0
	}
	flip := false
	for b.Loop() {
		first, second := targets[0], targets[1]
		if flip {
			first, second = second, first
		}
		flip = !flip
		first.round(b, loadRound, &keys)
		second.round(b, loadRound, &keys)
	}
	fake, bare := targets[0].perSecond(), targets[1].perSecond()
	b.ReportMetric(fake, "fake-req/s")
	b.ReportMetric(bare, "bare-req/s")
	b.ReportMetric(fake/bare, "fake/bare")
	if _, ok := processCPU(); ok {
		b.ReportMetric(targets[0].perCPUSecond()/targets[1].perCPUSecond(), "cpu-fake/bare")
	}
}

// discardWriter is a ResponseWriter that keeps the headers and drops the
// body, so that a handler benchmark measures the handler alone.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// handlerWithToken is fakepay's handler, with no rate limit and seed 1,
// closed when tb ends, and an A55 access token it issued.
func handlerWithToken(tb testing.TB) (http.Handler, string) {
	tb.Helper()
	o, err := parseFlags([]string{"-a55-rate-limit", "0", "-seed", "1"}, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	h, e, err := newHandler(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	rec := httptest.NewRecorder()
	tokReq := httptest.NewRequest(http.MethodPost, "/oauth2/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"},
		"client_id": {o.a55ID}, "client_secret": {o.a55Secret}}.Encode()))
	tokReq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	h.ServeHTTP(rec, tokReq)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &tok); err != nil || tok.AccessToken == "" {
		tb.Fatalf("token: %v", err)
	}
	return h, tok.AccessToken
}

// BenchmarkFakepayHandler times fakepay's handler and the bare handler of
// BenchmarkFakepayVsBare in process, without the network: the same keyed
// charge creations, a new key each, from GOMAXPROCS goroutines. It shows
// what one request costs each handler in CPU and allocations:
//
//	go test -run '^$' -bench FakepayHandler -benchmem ./cmd/fakepay
func BenchmarkFakepayHandler(b *testing.B) {
	h, token := handlerWithToken(b)
	var keys atomic.Int64
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"fake", h}, {"bare", bareHandler()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				body := strings.NewReader(guideCharge)
				for pb.Next() {
					body.Reset(guideCharge)
					req := httptest.NewRequest(http.MethodPost, chargePath, body)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+token)
					req.Header.Set(fakeserver.HeaderIdempotencyKey, fmt.Sprintf("load-key-%020d", keys.Add(1)))
					w := &discardWriter{h: http.Header{}}
					tc.h.ServeHTTP(w, req)
					if w.status/100 != 2 && w.status != 0 {
						b.Fatalf("%s: HTTP %d", tc.name, w.status)
					}
				}
			})
		})
	}
}

// TestBareAnswersAsTheFake keeps the load test fair: the bare handler
// answers the fake's charge (the same fields and values but the IDs and
// times it makes up, the same length) with the fake's headers.
func TestBareAnswersAsTheFake(t *testing.T) {
	h, token := handlerWithToken(t)
	answer := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, chargePath, strings.NewReader(guideCharge))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(fakeserver.HeaderIdempotencyKey, "load-key-00000000000000000001")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
		return rec
	}
	fake, bare := answer(h), answer(bareHandler())
	// fields is the answer without its generated values, and its length
	// without them (a time's text is as long as its fraction of a second).
	fields := func(body []byte) (map[string]any, int) {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		n := len(body)
		for _, generated := range []string{"charge_uuid", "wallet_uuid", "merchant_id", "transaction_reference", "created_at", "updated_at"} {
			v, ok := m[generated]
			if !ok {
				t.Errorf("no %s in %s", generated, body)
			}
			enc, _ := json.Marshal(v)
			n -= len(enc)
			delete(m, generated)
		}
		return m, n
	}
	f, fn := fields(fake.Body.Bytes())
	b, bn := fields(bare.Body.Bytes())
	if !reflect.DeepEqual(f, b) {
		t.Errorf("fake %v, bare %v", f, b)
	}
	if fn != bn {
		t.Errorf("body without generated values: fake %d bytes, bare %d", fn, bn)
	}
	for _, name := range []string{"Content-Type", "X-Request-Id"} {
		if f, b := len(fake.Header().Get(name)), len(bare.Header().Get(name)); f == 0 || f != b {
			t.Errorf("%s: fake %q, bare %q", name, fake.Header().Get(name), bare.Header().Get(name))
		}
	}
}
