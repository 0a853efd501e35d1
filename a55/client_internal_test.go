package a55

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

const (
	testID     = "unit-client"
	testSecret = "unit-secret-s3cr3t"
)

// fastPolicy is FastRetryPolicy with an attempt timeout no loopback answer
// reaches, even in a loaded -race run: FastRetryPolicy's 2 s can be
// reached there, and a timed-out attempt is rightly retried, which changes
// the attempt counts these tests assert.
func fastPolicy() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.AttemptTimeout = time.Minute
	return p
}

// unit is a go-github style test rig: a mux behind an httptest server with
// an OAuth2 token endpoint, and a client pointed at both.
type unit struct {
	mux    *http.ServeMux
	srv    *httptest.Server
	client *Client
	tokens atomic.Int32 // tokens issued
}

func setup(t *testing.T, opts ...payonce.Option) *unit {
	t.Helper()
	u := &unit{mux: http.NewServeMux()}
	u.srv = httptest.NewServer(u.mux)
	t.Cleanup(u.srv.Close)
	u.mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		if r.PostForm.Get("client_id") != testID || r.PostForm.Get("client_secret") != testSecret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		n := u.tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":3600,"token_type":"Bearer"}`, n)
	})
	auth := ClientCredentials(testID, testSecret)
	auth.TokenURL = u.srv.URL + "/oauth2/token"
	// The client's clock is fixed before the example card's expiry (12/2030),
	// which refCharge keeps; opts may set another.
	base := []payonce.Option{payonce.WithBaseURL(u.srv.URL), payonce.WithRetryPolicy(fastPolicy()),
		payoncetest.ClientClock(func() time.Time { return guideTime })}
	c, err := NewClient(auth, append(base, opts...)...)
	require.NoError(t, err)
	u.client = c
	return u
}

// guideTime is before the example card's expiry (12/2030).
var guideTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// refCharge is a card charge in the create-charge reference's form, with
// every required field (the payment-method pages' example payer and
// address), card expiring 12/2030.
func refCharge() *ChargeCreateRequest {
	v, _ := payonce.ParseAmount("100.00")
	return &ChargeCreateRequest{
		WalletUUID: "00000000-0000-0000-0000-000000000000", MerchantID: "11111111-1111-1111-1111-111111111111",
		TypeCharge: TypeCreditCard, Currency: payonce.BRL, InstallmentValue: v, InstallmentCount: 1,
		DueDate: "2026-12-31", Description: "Order 42",
		Payer: Payer{Name: "João Silva", Email: "joao.silva@example.com", TaxID: "39999999999", CellPhone: "+5511988887777",
			Address: Address{Street: "Av. Paulista", Number: "1000", Complement: "Apto 42", Neighborhood: "Bela Vista",
				City: "São Paulo", State: "SP", PostalCode: "01310-100", Country: "BR"}},
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "JOAO SILVA", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "123"},
	}
}

// refWire is refCharge's exact wire form.
const refWire = `{"wallet_uuid":"00000000-0000-0000-0000-000000000000","merchant_id":"11111111-1111-1111-1111-111111111111",` +
	`"payer_name":"João Silva","payer_email":"joao.silva@example.com","payer_tax_id":"39999999999","payer_cell_phone":"+5511988887777",` +
	`"installment_value":100.00,"installment_count":1,"currency":"BRL","due_date":"2026-12-31","description":"Order 42",` +
	`"type_charge":"credit_card","payer_address":{"street":"Av. Paulista","address_number":"1000","complement":"Apto 42",` +
	`"neighborhood":"Bela Vista","city":"São Paulo","state":"SP","postal_code":"01310-100","country":"BR"},` +
	`"card_number":"4111111111111111","card_name":"JOAO SILVA","card_expiry_month":"12","card_expiry_year":"2030","card_cvv":"123"}`

// pixCharge is a PIX charge in the reference's form, without wallet or
// merchant (a client's Account gives them).
func pixCharge() *ChargeCreateRequest {
	r := refCharge()
	r.WalletUUID, r.MerchantID, r.TypeCharge, r.Card = "", "", TypePix, nil
	return r
}

func TestPrintedFormsHideSecrets(t *testing.T) {
	u := setup(t)
	_, err := u.client.Token(context.Background())
	require.NoError(t, err)
	auth := ClientCredentials(testID, testSecret)
	fixed := AccessToken("fixed-token-value")
	fixedClient, err := NewClient(fixed, payonce.WithBaseURL(u.srv.URL))
	require.NoError(t, err)
	wv, err := NewWebhookVerifier(testSecret, nil)
	require.NoError(t, err)
	for _, v := range []any{auth, &auth, fixed, u.client.auth, u.client, newAuthorizer(fixed),
		u.client.Core(), fixedClient, fixedClient.Core(), wv, *wv} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
			s := fmt.Sprintf(verb, v)
			assert.NotContains(t, s, fmt.Sprint([]byte(testSecret)), verb)
			assert.NotContains(t, s, testSecret, verb)
			assert.NotContains(t, s, "fixed-token-value", verb)
			assert.NotContains(t, s, "tok-1", verb)
		}
	}
	req := refCharge()
	pointerAddr := regexp.MustCompile(`0x[0-9a-f]+`) // a pointer printed by %#v
	for _, v := range []any{req, *req, req.Card} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			// %#v prints pointers as 0xc000123...: only the address may hold "123".
			s := pointerAddr.ReplaceAllString(fmt.Sprintf(verb, v), "0x")
			assert.NotContains(t, s, "4111111111111111", verb)
			assert.NotContains(t, s, "123", verb)
		}
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("charge", "req", req, "value", *req)
	assert.NotContains(t, buf.String(), "4111111111111111")
	assert.NotContains(t, buf.String(), "cvv")
	assert.Contains(t, buf.String(), `"last4":"1111"`)
}

func TestNewClientConfig(t *testing.T) {
	c, err := NewClient(ClientCredentials("id", "secret"))
	require.NoError(t, err)
	assert.Equal(t, SandboxURL, c.view.BaseURL)
	assert.Equal(t, "a55", c.view.Provider)
	assert.Equal(t, keyRules(), c.view.KeyRules)
	assert.Equal(t, payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: 24 * time.Hour}, keyRules(), "the rules the core's tests use")
	_, err = NewClient(Auth{})
	assert.ErrorIs(t, err, payonce.ErrInvalidConfig)
	c, err = NewClient(ClientCredentials("id", "secret"), WithEnvironment(Production), WithRateLimit())
	require.NoError(t, err)
	assert.Equal(t, ProductionURL, c.view.BaseURL)
	c, err = NewClient(AccessToken("t"), WithEnvironment(ProductionCoreManager))
	require.NoError(t, err)
	assert.Equal(t, CoreManagerURL, c.view.BaseURL)
}

func TestRateLimiter(t *testing.T) {
	l := NewRateLimiter(RequestsPerMinute, 10)
	assert.Equal(t, 10, l.Burst())
	assert.InDelta(t, 90.0/60, float64(l.Limit()), 1e-9)
	// Worst case in any rolling minute: the burst plus a minute of refill.
	assert.LessOrEqual(t, float64(l.Burst())+float64(l.Limit())*60, float64(RequestsPerMinute))
	l = NewRateLimiter(100, 500)
	assert.Equal(t, 10, l.Burst())
	assert.Equal(t, RateLimit{}, ParseRateLimit(nil))
	assert.Equal(t, RateLimit{Limit: 5}, ParseRateLimit(http.Header{"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Reset": {"x"}}))
}

// A plain-http webhook URL to a non-loopback host passes only when the
// client itself was opted into plain HTTP (a non-loopback http:// base
// URL, which payonce.NewClient allows only with payonce.WithInsecureHTTP).
func TestCheckWebhookURLFollowsTheInsecureOptIn(t *testing.T) {
	const hook = "http://merchant.example/hooks/a55"
	require.ErrorIs(t, checkWebhookURL(hook, "https://api.example"), payonce.ErrInvalidRequest)
	require.ErrorIs(t, checkWebhookURL(hook, "http://127.0.0.1:8080"), payonce.ErrInvalidRequest)
	assert.NoError(t, checkWebhookURL(hook, "http://api.internal:8080"))
	assert.NoError(t, checkWebhookURL("http://[::ffff:127.0.0.1]:9/h", "https://api.example"), "an IPv4-mapped loopback address is loopback")
}

// Every operation is observed under its documented path template: the
// identifiers of a refund's, a cancel's or a fetch's path never reach a
// span or a metric.
func TestRoutesAreTheDocumentedTemplates(t *testing.T) {
	var mu sync.Mutex
	routes := map[string]string{}
	obs := payonce.Observer{StartOperation: func(ctx context.Context, info payonce.OperationInfo) context.Context {
		mu.Lock()
		defer mu.Unlock()
		routes[info.Operation] = info.Route
		return ctx
	}}
	u := setup(t, payonce.WithObserver(obs))
	u.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"charge_uuid":"ch_1","status":"confirmed","charges":[]}`)
	})
	c := u.client.WithAccount(Account{MerchantID: "m-1", WalletUUID: "w-1"})
	ctx := context.Background()
	_, err := c.Charges.Create(ctx, pixCharge())
	require.NoError(t, err)
	_, err = c.Charges.Refund(ctx, &RefundRequest{ChargeUUID: "ch-4111111111111111"})
	require.NoError(t, err)
	_, err = c.Charges.Cancel(ctx, &CancelRequest{ChargeUUID: "ch-2"})
	require.NoError(t, err)
	_, err = c.Charges.Capture(ctx, &CaptureRequest{ChargeUUID: "ch-3"})
	require.NoError(t, err)
	_, err = c.Charges.Fetch(ctx, "ch-4")
	require.NoError(t, err)
	_, err = c.Charges.Get(ctx, "ch-5", "")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"charges.create": PathCharges, "charges.refund": PathChargeRefund, "charges.cancel": PathChargeCancel,
		"charges.capture": PathChargeCapture, "charges.fetch": PathChargeByUUID, "charges.get": PathCharges,
	}, routes)
}
