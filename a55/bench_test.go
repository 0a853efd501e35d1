package a55_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/devtools/benchpair"
	"github.com/payonce/payonce/internal/devtools/benchwire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chargeBench is one server and the three ways of charging on it: bare
// net/http, raw go-retryablehttp and the SDK. Each does the least a
// merchant must: a new UUID key, the JSON body with the card whole, the
// POST with the bearer token, the JSON answer decoded.
type chargeBench struct {
	url, token string
	hc         *http.Client
	rc         *retryablehttp.Client
	c          *a55.Client
	core       *payonce.Client // the core client posting the bare bytes
	amount     payonce.Amount
}

func newChargeBench(b *testing.B, baseURL, token string) *chargeBench {
	hc := corekit.DefaultHTTPClient()
	rc := retryablehttp.NewClient()
	rc.HTTPClient, rc.Logger = hc, nil
	c, err := a55.NewClient(a55.AccessToken(token), payonce.WithBaseURL(baseURL), payonce.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	core, err := payonce.NewClient(payonce.WithBaseURL(baseURL), payonce.WithHTTPClient(hc), payonce.WithSigner(bearer(token)))
	if err != nil {
		b.Fatal(err)
	}
	amount, _ := payonce.ParseAmount("100.00")
	return &chargeBench{url: baseURL + a55.PathCharges, token: token, hc: hc, rc: rc, c: c, core: core, amount: amount}
}

// bearer signs a request with a fixed bearer token, as the a55 client's
// authorizer does with an access token.
type bearer string

func (t bearer) Sign(req *http.Request, _ []byte) error {
	req.Header.Set("Authorization", "Bearer "+string(t))
	return nil
}

// cannedServer answers every request with answer.
func cannedServer(b *testing.B, answer string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func (cb *chargeBench) bareBody() []byte {
	body, _ := json.Marshal(benchwire.NewChargeRequest(a55test.CardConfirms))
	return body
}

func (cb *chargeBench) setHeaders(h http.Header, key string) {
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer "+cb.token)
	h.Set(corekit.HeaderIdempotencyKey, key)
}

func checkBare(b *testing.B, resp *http.Response, err error) {
	if err != nil {
		b.Fatal(err)
	}
	var ch benchwire.Charge
	err = json.NewDecoder(resp.Body).Decode(&ch)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || ch.UUID == "" {
		b.Fatalf("bad answer %d %v", resp.StatusCode, err)
	}
}

func (cb *chargeBench) bare(b *testing.B) {
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, cb.url, bytes.NewReader(cb.bareBody()))
	cb.setHeaders(req.Header, key.String())
	resp, err := cb.hc.Do(req)
	checkBare(b, resp, err)
}

func (cb *chargeBench) retryable(b *testing.B) {
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	req, _ := retryablehttp.NewRequestWithContext(context.Background(), http.MethodPost, cb.url, cb.bareBody())
	cb.setHeaders(req.Header, key.String())
	resp, err := cb.rc.Do(req)
	checkBare(b, resp, err)
}

// core posts the bare client's body through the core client and decodes
// the answer as the bare client does: what the a55 client costs over the
// core is sdk's time over this.
func (cb *chargeBench) coreDo(b *testing.B) {
	var ch benchwire.Charge
	_, err := cb.core.Do(context.Background(), &payonce.Request{Operation: "charges.create", Method: http.MethodPost,
		Path: a55.PathCharges, Body: benchwire.NewChargeRequest(a55test.CardConfirms), Keyed: true}, &ch)
	if err != nil || ch.UUID == "" {
		b.Fatal(err)
	}
}

func (cb *chargeBench) sdk(b *testing.B) {
	ch, err := cb.c.Charges.Create(context.Background(), benchRequest(cb.amount, a55test.CardConfirms))
	if err != nil || ch.UUID == "" {
		b.Fatal(err)
	}
}

// benchRequest is benchwire.NewChargeRequest as an a55 request: the same
// bytes on the wire (TestBenchBodiesAreTheSame).
func benchRequest(amount payonce.Amount, number string) *a55.ChargeCreateRequest {
	return &a55.ChargeCreateRequest{
		WalletUUID: "00000000-0000-0000-0000-000000000000", MerchantID: "11111111-1111-1111-1111-111111111111",
		TypeCharge: a55.TypeCreditCard, Currency: payonce.BRL, InstallmentValue: amount, InstallmentCount: 1,
		DueDate: "2099-12-31", Description: "Order 42",
		Payer: a55.Payer{Name: "João Silva", Email: "joao.silva@example.com", TaxID: "39999999999", CellPhone: "+5511988887777",
			Address: a55.Address{Street: "Av. Paulista", Number: "1000", Complement: "Apto 42", Neighborhood: "Bela Vista",
				City: "São Paulo", State: "SP", PostalCode: "01310-100", Country: "BR"}},
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "JOAO SILVA", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	}
}

// The paired benchmark's two sides send the same bytes: the bare client's
// json.Marshal of benchwire's struct and the SDK's wire form; and the
// answer the httptest server gives is one the SDK reads.
func TestBenchBodiesAreTheSame(t *testing.T) {
	amount, err := payonce.ParseAmount("100.00")
	require.NoError(t, err)
	bare, err := json.Marshal(benchwire.NewChargeRequest(a55test.CardConfirms))
	require.NoError(t, err)
	sdk, err := benchRequest(amount, a55test.CardConfirms).MarshalWire()
	require.NoError(t, err)
	assert.Equal(t, string(bare), string(sdk))
	var ch a55.Charge
	require.NoError(t, a55.Codec{}.DecodeSuccess(200, nil, []byte(benchwire.ChargeAnswer), &ch))
	assert.Equal(t, a55.StatusConfirmed, ch.Status)
}

// BenchmarkChargeCreate compares one successful charge done three ways
// (chargeBench) on two servers: httptest, an httptest server giving the
// fake's answer byte for byte (what the client costs), and fake, the A55
// fake itself (keys, store and ledger on the server side too).
func BenchmarkChargeCreate(b *testing.B) {
	fake := a55test.NewServer(a55test.WithRateLimit(-1, 0))
	b.Cleanup(fake.Close)
	for _, s := range []struct {
		name string
		cb   *chargeBench
	}{
		{"httptest", newChargeBench(b, cannedServer(b, benchwire.ChargeAnswer).URL, "tok_bench")},
		{"fake", newChargeBench(b, fake.URL, fake.IssueToken())},
	} {
		for _, row := range []struct {
			name string
			run  func(*testing.B)
		}{{"bare-net-http", s.cb.bare}, {"raw-retryablehttp", s.cb.retryable}, {"core", s.cb.coreDo}, {"sdk", s.cb.sdk}} {
			b.Run(s.name+"/"+row.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					row.run(b)
				}
			})
		}
	}
}

// BenchmarkChargeCreatePaired times, on the httptest server, each SDK
// charge next to a bare net/http one (benchpair.Run): ratio is the SDK's
// time over bare net/http's; sdk-vs-core is the typed client over the
// core client sending the same bytes (what the typed layer costs).
func BenchmarkChargeCreatePaired(b *testing.B) {
	cb := newChargeBench(b, cannedServer(b, benchwire.ChargeAnswer).URL, "tok_bench")
	b.Run("sdk", func(b *testing.B) { benchpair.Run(b, cb.bare, cb.sdk) })
	b.Run("raw-retryablehttp", func(b *testing.B) { benchpair.Run(b, cb.bare, cb.retryable) })
	b.Run("sdk-vs-core", func(b *testing.B) { benchpair.Run(b, cb.coreDo, cb.sdk) })
}
