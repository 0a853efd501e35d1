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

	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/fakeserver"
)

// loadConcurrency is how many requests the load generator keeps in flight.
const loadConcurrency = 32

// loadRound is how many requests one round sends to each server.
const loadRound = 2000

// bareAnswer is what the bare handler answers: the fake's charge, field
// for field, so that both send the same bytes.
type bareAnswer struct {
	UUID           string          `json:"charge_uuid"`
	WalletUUID     string          `json:"wallet_uuid"`
	Status         string          `json:"status"`
	Amount         string          `json:"amount"`
	CapturedAmount string          `json:"captured_amount"`
	RefundedAmount string          `json:"refunded_amount"`
	Currency       string          `json:"currency"`
	TypeCharge     string          `json:"type_charge"`
	Capture        bool            `json:"capture"`
	Card           *bareCard       `json:"card,omitempty"`
	Payer          json.RawMessage `json:"payer,omitempty"`
	Message        []string        `json:"message"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// bareCard is the card of a bareAnswer.
type bareCard struct {
	Last4           string `json:"last4"`
	HolderName      string `json:"holder_name,omitempty"`
	ExpirationMonth string `json:"expiration_month,omitempty"`
	ExpirationYear  string `json:"expiration_year,omitempty"`
}

// bareHandler is what the fake is measured against: a net/http handler
// that reads and parses the same JSON and answers a charge of the fake's
// shape, with the fake's headers, and nothing else (no idempotency,
// ledger, log or faults).
func bareHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req a55.ChargeCreateRequest
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, fakeserver.MaxRequestBody))
		if err != nil || json.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		payer, _ := json.Marshal(req.Payer)
		var card *bareCard
		if req.Card != nil {
			card = &bareCard{Last4: req.Card.Number.Last4(), HolderName: req.Card.HolderName,
				ExpirationMonth: req.Card.ExpirationMonth, ExpirationYear: req.Card.ExpirationYear}
		}
		now := time.Now().UTC()
		out, _ := json.Marshal(bareAnswer{UUID: "3f1c2a9e-0d7b-4c51-9a1e-6b2f1e8d4c70", WalletUUID: "0c9e6f2a-5b1d-4e8a-9c3f-7a2b1d0e4f60",
			Status: "confirmed", Amount: req.InstallmentValue.String(), CapturedAmount: req.InstallmentValue.String(), RefundedAmount: "0.00",
			Currency: string(req.Currency), TypeCharge: string(req.TypeCharge), Capture: true, Card: card, Payer: payer,
			Message: []string{}, CreatedAt: now, UpdatedAt: now, IdempotencyKey: r.Header.Get("Idempotency-Key")})
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
				req, _ := http.NewRequest(http.MethodPost, lt.srv.URL+a55.PathCharges, strings.NewReader(guideCharge))
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
					req := httptest.NewRequest(http.MethodPost, a55.PathCharges, body)
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
		req := httptest.NewRequest(http.MethodPost, a55.PathCharges, strings.NewReader(guideCharge))
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
		for _, generated := range []string{"charge_uuid", "wallet_uuid", "created_at", "updated_at"} {
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
