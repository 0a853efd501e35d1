// Package bench compares payonce with its peers on one loopback server:
// bare net/http, a raw go-retryablehttp client, stripe-go, and payonce's
// core and typed clients, each doing one successful keyed POST and
// decoding the same answer bytes. It is its own module so that the SDK's
// go.mod never needs stripe-go or benchstat; run.sh runs it and prints
// benchstat's table.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/devtools/benchpair"
	"github.com/payonce/payonce/internal/devtools/benchwire"
	"github.com/stripe/stripe-go/v85"
)

// Answers, byte for byte the same for every client of an operation.
const (
	// intentAnswer is a Stripe PaymentIntent as the API answers a create.
	intentAnswer = `{"id":"pi_3QbXv2LkdIwHu7ix0aBcDeFg","object":"payment_intent","amount":1000,"amount_capturable":0,` +
		`"amount_received":0,"capture_method":"automatic","client_secret":"pi_3QbXv2LkdIwHu7ix0aBcDeFg_secret_x",` +
		`"confirmation_method":"automatic","created":1764633600,"currency":"usd","description":"order 1001",` +
		`"livemode":false,"metadata":{"order_id":"1001"},"payment_method_types":["card"],"status":"requires_payment_method"}`
)

const (
	pathIntents = "/v1/payment_intents"
	cardNumber  = "4111111111111111"
)

// intentRequest is the JSON body the JSON clients send to create an
// intent (stripe-go sends the same fields form-encoded, as Stripe's API
// takes them).
type intentRequest struct {
	Amount      int64             `json:"amount"`
	Currency    string            `json:"currency"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
}

var intentBody = intentRequest{Amount: 1000, Currency: "usd", Description: "order 1001", Metadata: map[string]string{"order_id": "1001"}}

// intent is what the JSON clients decode an intent into.
type intent struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	AmountCapturable   int64             `json:"amount_capturable"`
	AmountReceived     int64             `json:"amount_received"`
	CaptureMethod      string            `json:"capture_method"`
	ClientSecret       string            `json:"client_secret"`
	ConfirmationMethod string            `json:"confirmation_method"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Description        string            `json:"description"`
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	PaymentMethodTypes []string          `json:"payment_method_types"`
	Status             string            `json:"status"`
}

// peers is the server and every client, built once.
type peers struct {
	url    string
	hc     *http.Client
	rc     *retryablehttp.Client
	sc     *stripe.Client
	core   *payonce.Client
	a55    *a55.Client
	cp     *coinepay.Client
	signer *coinepay.HMACSigner
	amount payonce.Amount
}

func newPeers(b *testing.B) *peers {
	answers := map[string]string{pathIntents: intentAnswer, a55.PathCharges: benchwire.ChargeAnswer, coinepay.PathCardApply: benchwire.ApplyAnswer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answers[r.URL.Path])
	}))
	b.Cleanup(srv.Close)
	p := &peers{url: srv.URL, hc: corekit.DefaultHTTPClient()}
	p.rc = retryablehttp.NewClient()
	p.rc.HTTPClient, p.rc.Logger = p.hc, nil
	p.sc = stripe.NewClient("sk_test_bench", stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(srv.URL), HTTPClient: p.hc, LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	var err error
	if p.core, err = payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(p.hc)); err != nil {
		b.Fatal(err)
	}
	if p.a55, err = a55.NewClient(a55.AccessToken("tok_bench"), payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(p.hc)); err != nil {
		b.Fatal(err)
	}
	if p.cp, err = coinepay.NewClient("demo-key", "demo-secret", payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(p.hc)); err != nil {
		b.Fatal(err)
	}
	if p.signer, err = coinepay.NewHMACSigner("demo-key", "demo-secret"); err != nil {
		b.Fatal(err)
	}
	p.amount, _ = payonce.ParseAmount("100.00")
	return p
}

// post sends body with a new key through bare net/http (signed when
// signer is set, with a bearer token when token is) and decodes the
// answer into out.
func (p *peers) post(b *testing.B, path string, body any, token string, signer *coinepay.HMACSigner, out any) {
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, p.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key.String())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if signer != nil {
		if err := signer.Sign(req, raw); err != nil {
			b.Fatal(err)
		}
	}
	resp, err := p.hc.Do(req)
	decode(b, resp, err, out)
}

func decode(b *testing.B, resp *http.Response, err error, out any) {
	if err != nil {
		b.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(out)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("bad answer %d %v", resp.StatusCode, err)
	}
}

func (p *peers) intentBare(b *testing.B) {
	var out intent
	p.post(b, pathIntents, &intentBody, "", nil, &out)
	must(b, out.ID)
}

func (p *peers) intentRetryable(b *testing.B) {
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	raw, _ := json.Marshal(&intentBody)
	req, _ := retryablehttp.NewRequestWithContext(context.Background(), http.MethodPost, p.url+pathIntents, raw)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key.String())
	resp, err := p.rc.Do(req)
	var out intent
	decode(b, resp, err, &out)
	must(b, out.ID)
}

func (p *peers) intentStripe(b *testing.B) {
	params := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(1000), Currency: stripe.String("usd"),
		Description: stripe.String("order 1001")}
	params.AddMetadata("order_id", "1001")
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	params.SetIdempotencyKey(key.String())
	pi, err := p.sc.V1PaymentIntents.Create(context.Background(), params)
	if err != nil {
		b.Fatal(err)
	}
	must(b, pi.ID)
}

func (p *peers) intentPayonce(b *testing.B) {
	var out intent
	_, err := p.core.Do(context.Background(), &payonce.Request{Operation: "payment_intents.create", Method: http.MethodPost,
		Path: pathIntents, Body: &intentBody, Keyed: true}, &out)
	if err != nil {
		b.Fatal(err)
	}
	must(b, out.ID)
}

func (p *peers) chargeBare(b *testing.B) {
	var out benchwire.Charge
	p.post(b, a55.PathCharges, benchwire.NewChargeRequest(cardNumber), "tok_bench", nil, &out)
	must(b, out.UUID)
}

func (p *peers) chargePayonce(b *testing.B) {
	// benchwire.NewChargeRequest's charge: the same bytes on the wire.
	ch, err := p.a55.Charges.Create(context.Background(), &a55.ChargeCreateRequest{
		WalletUUID: "00000000-0000-0000-0000-000000000000", MerchantID: "11111111-1111-1111-1111-111111111111",
		TypeCharge: a55.TypeCreditCard, Currency: payonce.BRL, InstallmentValue: p.amount, InstallmentCount: 1,
		DueDate: "2099-12-31", Description: "Order 42",
		Payer: a55.Payer{Name: "João Silva", Email: "joao.silva@example.com", TaxID: "39999999999", CellPhone: "+5511988887777",
			Address: a55.Address{Street: "Av. Paulista", Number: "1000", Complement: "Apto 42", Neighborhood: "Bela Vista",
				City: "São Paulo", State: "SP", PostalCode: "01310-100", Country: "BR"}},
		Card: &payonce.Card{Number: cardNumber, HolderName: "JOAO SILVA", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	})
	if err != nil {
		b.Fatal(err)
	}
	must(b, ch.UUID)
}

func (p *peers) applyBare(b *testing.B) {
	var out benchwire.Apply
	p.post(b, coinepay.PathCardApply, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, "", p.signer, &out)
	must(b, out.Data.CardID)
}

func (p *peers) applyPayonce(b *testing.B) {
	res, err := p.cp.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	if err != nil {
		b.Fatal(err)
	}
	must(b, res.CardID)
}

func must(b *testing.B, id string) {
	if id == "" {
		b.Fatal("answer without an ID")
	}
}

// row is one client doing one operation; the first row of an operation
// is its baseline, bare net/http.
type row struct {
	op, client string
	run        func(*testing.B)
}

func (p *peers) rows() []row {
	return []row{
		{"intent", "bare", p.intentBare},
		{"intent", "retryablehttp", p.intentRetryable},
		{"intent", "stripe-go", p.intentStripe},
		{"intent", "payonce", p.intentPayonce},
		{"a55-charge", "bare", p.chargeBare},
		{"a55-charge", "payonce", p.chargePayonce},
		{"coinepay-apply", "bare", p.applyBare},
		{"coinepay-apply", "payonce", p.applyPayonce},
	}
}

// BenchmarkPeer runs every client on every operation it can do, one
// sub-benchmark each (op=..., client=...), reporting time, the process's
// CPU time (cpu-ns/op: client, server and GC, the figure that holds when
// other processes load the machine), bytes and allocations. With -count
// the rows interleave: each count runs them all in turn.
func BenchmarkPeer(b *testing.B) {
	p := newPeers(b)
	for _, r := range p.rows() {
		b.Run("op="+r.op+"/client="+r.client, func(b *testing.B) {
			b.ReportAllocs()
			start := benchpair.CPUTime()
			for b.Loop() {
				r.run(b)
			}
			b.ReportMetric(float64(benchpair.CPUTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkPeerPaired times each client's operation next to bare
// net/http doing the same (benchpair.Run): ratio and cpu-ratio are the
// client's time over bare net/http's.
func BenchmarkPeerPaired(b *testing.B) {
	p := newPeers(b)
	base := map[string]func(*testing.B){}
	for _, r := range p.rows() {
		if r.client == "bare" {
			base[r.op] = r.run
			continue
		}
		b.Run("op="+r.op+"/client="+r.client, func(b *testing.B) { benchpair.Run(b, base[r.op], r.run) })
	}
}
