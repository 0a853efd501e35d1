package a55contract_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55contract"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
)

// The contract tests: each runs the same checks against every target,
// the payonce fake always and A55's sandbox when its credentials are in
// the environment (a55contract.SandboxFromEnv). A check the sandbox
// cannot be made to show (a PIX paid, a code only an answer rule gives)
// runs on the fake only and says so when skipped. docs/a55.md's table
// names the test that holds each row.

// sandboxEnv is the sandbox of the environment (ok false: none).
func sandboxEnv() (a55contract.Sandbox, bool, error) { return a55contract.SandboxFromEnv(os.Getenv) }

// sandboxLimiter paces every sandbox client of the run to A55's 100
// requests a minute per client_id.
var sandboxLimiter = sync.OnceValue(func() *rate.Limiter {
	return a55.NewRateLimiter(a55.RequestsPerMinute, 10)
})

// A run without the sandbox's credentials says so here, in one line;
// with them, it names the account it checks (never a secret).
func TestContractSandbox(t *testing.T) {
	s, ok, err := sandboxEnv()
	require.NoError(t, err)
	if !ok {
		t.Skip(a55contract.SkipLine)
	}
	t.Logf("contract tests run against %v", s)
}

// SandboxFromEnv takes none of the variables (the fake only), all four
// required ones, or fails naming what is missing or unsafe; the account
// prints without its secret.
func TestSandboxFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	_, ok, err := a55contract.SandboxFromEnv(env(nil))
	assert.False(t, ok)
	require.NoError(t, err)

	full := map[string]string{a55contract.EnvClientID: "cid", a55contract.EnvSecret: "sandbox-s3cr3t",
		a55contract.EnvMerchantID: "m-1", a55contract.EnvWalletUUID: "w-1"}
	s, ok, err := a55contract.SandboxFromEnv(env(full))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "w-1", s.WalletUUID)
	for _, printed := range []string{s.String(), s.GoString()} {
		assert.NotContains(t, printed, "s3cr3t")
	}
	c, err := s.Client()
	require.NoError(t, err)
	env2, known := c.Environment()
	assert.True(t, known)
	assert.Equal(t, a55.Sandbox, env2)
	assert.Equal(t, a55.Account{MerchantID: "m-1", WalletUUID: "w-1"}, c.Account())

	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range full {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for name, m := range map[string]map[string]string{
		"a missing secret":      with(a55contract.EnvSecret, ""),
		"production's origin":   with(a55contract.EnvBaseURL, a55.ProductionURL),
		"plain http":            with(a55contract.EnvBaseURL, "http://sandbox.example"),
		"another origin alone":  with(a55contract.EnvBaseURL, "https://core-manager.a55.tech"),
		"a webhook URL alone":   with(a55contract.EnvWebhookURL, "https://tunnel.example/hook"),
		"a webhook with no key": with(a55contract.EnvWebhookListen, "127.0.0.1:0"),
	} {
		_, ok, err := a55contract.SandboxFromEnv(env(m))
		assert.False(t, ok, name)
		assert.ErrorIs(t, err, a55contract.ErrSandboxConfig, name)
	}
	_, _, err = a55contract.SandboxFromEnv(env(with(a55contract.EnvSecret, "")))
	assert.ErrorContains(t, err, a55contract.EnvSecret, "names what is missing")
}

// target is where a contract test runs.
type target struct {
	name   string
	client *a55.Client
	fake   *a55test.Server // nil: A55's sandbox
	sb     a55contract.Sandbox
	// build returns another client for the target (more options, such as
	// a transport), acting for the same account.
	build func(opts ...payonce.Option) (*a55.Client, error)
	// baseURL, tokenURL, clientID and secret are for raw requests.
	baseURL, tokenURL, clientID, secret string
	// tag marks what this run creates: its descriptions and keys.
	tag string
	// made counts the charges create made, for their keys.
	made atomic.Int32
	// luhn: the client checks cards with Luhn (a sandbox on another
	// origin than a55.SandboxURL), so A55's test cards are sent as
	// a55test.TestCard numbers with the same last digit.
	luhn bool
}

// contract runs check against the fake; against the fake again as the
// sandbox is checked (no trigger, no extension: the sandbox's branch of
// every check, which CI cannot run otherwise); and, when configured,
// against the sandbox.
func contract(t *testing.T, check func(t *testing.T, tg *target)) {
	t.Helper()
	t.Run("fake", func(t *testing.T) { check(t, fakeTarget(t)) })
	t.Run("fake-as-sandbox", func(t *testing.T) { check(t, blindTarget(t)) })
	s, ok, err := sandboxEnv()
	require.NoError(t, err)
	if ok {
		t.Run("sandbox", func(t *testing.T) {
			check(t, sandboxTarget(t, "sandbox", s, payonce.WithLimiter(sandboxLimiter())))
		})
	}
}

// fastPolicy retries after milliseconds, with an attempt timeout no
// loopback answer reaches in a loaded -race run.
func fastPolicy() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.AttemptTimeout = time.Minute
	return p
}

func fakeTarget(t *testing.T) *target {
	srv := a55test.New(t)
	build := func(opts ...payonce.Option) (*a55.Client, error) {
		return srv.Client(append([]payonce.Option{payonce.WithRetryPolicy(fastPolicy())}, opts...)...)
	}
	c, err := build()
	require.NoError(t, err)
	return &target{name: "fake", client: c, fake: srv, build: build, baseURL: srv.URL, tokenURL: srv.TokenURL(),
		clientID: srv.ClientID(), secret: srv.ClientSecret(), tag: runTag(t)}
}

// blindTarget is the fake reached as the sandbox is: its account as
// the environment would give it, no handle on the fake.
func blindTarget(t *testing.T) *target {
	srv := a55test.New(t)
	s := a55contract.Sandbox{ClientID: srv.ClientID(), ClientSecret: srv.ClientSecret(), MerchantID: srv.MerchantID(),
		WalletUUID: srv.WalletUUID(), EntityUUID: srv.EntityUUID(), WebhookSecret: srv.WebhookSecret(), WebhookListen: "127.0.0.1:0",
		BaseURL: srv.URL, TokenURL: srv.TokenURL()}
	return sandboxTarget(t, "fake-as-sandbox", s, payonce.WithRetryPolicy(fastPolicy()))
}

func sandboxTarget(t *testing.T, name string, s a55contract.Sandbox, opts ...payonce.Option) *target {
	build := func(more ...payonce.Option) (*a55.Client, error) {
		return s.Client(append(slices.Clone(opts), more...)...)
	}
	c, err := build()
	require.NoError(t, err)
	base, tok := s.BaseURL, s.TokenURL
	if base == "" {
		base = a55.SandboxURL
	}
	if tok == "" {
		tok = a55.Sandbox.TokenURL()
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	env, known := c.Environment()
	return &target{name: name, client: c, sb: s, build: build, baseURL: base, tokenURL: tok,
		clientID: s.ClientID, secret: s.ClientSecret, tag: runTag(t),
		luhn: !(known && env == a55.Sandbox) && !isLoopback(u.Hostname())}
}

// isLoopback reports a host whose cards the client does not check with
// Luhn (a fake's).
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// runTag is a mark no other run shares.
func runTag(t *testing.T) string {
	b := make([]byte, 6)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "payonce-contract-" + hex.EncodeToString(b)
}

func (tg *target) onFake() bool { return tg.fake != nil }

// fakeOnly skips what only the fake can be made to show, saying why.
func (tg *target) fakeOnly(t *testing.T, why string) {
	t.Helper()
	if tg.fake == nil {
		t.Skip("fake only: " + why)
	}
}

func (tg *target) now() time.Time {
	if tg.fake != nil {
		return tg.fake.Clock().Now()
	}
	return time.Now()
}

// key is a new Idempotency-Key of this run for label.
func (tg *target) key(t *testing.T, label string) payonce.Key {
	k, err := payonce.NewKey(tg.now(), tg.tag, label)
	require.NoError(t, err)
	return k
}

// payer is a payer with every field A55 requires; the tax ID is a CPF
// whose check digits are right.
func payer() a55.Payer {
	p := a55test.TestPayer()
	p.TaxID = "52998224725"
	return p
}

// deviceInfo is a browser as A55's 3DS page collects it.
func deviceInfo() *a55.DeviceInfo {
	return &a55.DeviceInfo{IPAddress: "192.0.2.10", UserAgent: "Mozilla/5.0", HTTPAcceptContent: "text/html", HTTPAcceptBrowserValue: "*/*",
		HTTPBrowserLanguage: "pt-BR", HTTPBrowserJavaEnabled: a55.Bool(false), HTTPBrowserJavaScriptEnabled: a55.Bool(true),
		HTTPBrowserColorDepth: "24", HTTPBrowserScreenHeight: "1080", HTTPBrowserScreenWidth: "1920", HTTPBrowserTimeDifference: "180"}
}

// cardNumber is number as the target's client sends it (TestCard's
// number of the same last digit where the client checks Luhn).
func (tg *target) cardNumber(number string) string {
	if !tg.luhn || luhnValid(number) {
		return number
	}
	return a55test.TestCard(int(number[len(number)-1] - '0'))
}

func luhnValid(n string) bool {
	sum := 0
	for i := len(n) - 1; i >= 0; i-- {
		d := int(n[i] - '0')
		if (len(n)-1-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// card is a credit card charge of amount BRL on number, due in a week,
// the card expiring in three years; description marks it as this run's.
func (tg *target) card(amount, number, label string) *a55.ChargeCreateRequest {
	r := a55test.CardCharge(amount, tg.cardNumber(number))
	r.Payer, r.Description = payer(), tg.tag+" "+label
	r.DueDate = tg.now().AddDate(0, 0, 7).Format(time.DateOnly)
	r.Card.ExpirationYear = strconv.Itoa(tg.now().Year() + 3)
	return r
}

// method is a charge of type typ without card fields.
func (tg *target) method(typ a55.TypeCharge, amount, label string) *a55.ChargeCreateRequest {
	r := tg.card(amount, "4024007153763191", label)
	r.TypeCharge, r.Card = typ, nil
	return r
}

// create creates r under a new key of this run and requires a success.
func (tg *target) create(t *testing.T, r *a55.ChargeCreateRequest) *a55.Charge {
	t.Helper()
	ch, err := tg.client.Charges.Create(t.Context(), r, payonce.WithKey(tg.key(t, "create-"+strconv.Itoa(int(tg.made.Add(1))))))
	require.NoError(t, err)
	require.NotEmpty(t, ch.UUID)
	return ch
}

// ref is testdata/a55/reference.json, the one list of A55's documented
// names.
type ref struct {
	Endpoints []refEndpoint `json:"endpoints"`
	GuideForm struct {
		Page    string     `json:"page"`
		Request []refField `json:"request"`
	} `json:"guide_form"`
	Statuses []struct {
		Name string `json:"name"`
		Page string `json:"page"`
	} `json:"statuses"`
	Codes []struct {
		Code string `json:"code"`
		Page string `json:"page"`
	} `json:"codes"`
	ReturnCodes struct {
		Page        string            `json:"page"`
		ByLastDigit map[string]string `json:"by_last_digit"`
	} `json:"return_codes"`
	Webhook struct {
		Page    string     `json:"page"`
		Headers []string   `json:"headers"`
		Fields  []refField `json:"fields"`
	} `json:"webhook"`
}

type refEndpoint struct {
	Name       string     `json:"name"`
	Method     string     `json:"method"`
	Path       string     `json:"path"`
	Page       string     `json:"page"`
	PathParams []string   `json:"path_params"`
	Request    []refField `json:"request"`
	Query      []refField `json:"query"`
	Response   []refField `json:"response"`
	ResponseAs string     `json:"response_as"`
	Never      []string   `json:"response_never"`
}

type refField struct {
	Name     string     `json:"name"`
	Page     string     `json:"page"`
	Alias    string     `json:"alias"`
	FakeOnly bool       `json:"fake_only"`
	Fields   []refField `json:"fields"`
}

func loadRef(t *testing.T) *ref {
	t.Helper()
	b, err := os.ReadFile("../../testdata/a55/reference.json")
	require.NoError(t, err)
	var r ref
	require.NoError(t, json.Unmarshal(b, &r))
	return &r
}

func (r *ref) endpoint(t *testing.T, name string) refEndpoint {
	t.Helper()
	for _, e := range r.Endpoints {
		if e.Name == name {
			return e
		}
	}
	require.FailNow(t, "reference.json has no endpoint "+name)
	return refEndpoint{}
}

// names lists fields as "parent.child".
func names(fs []refField, prefix string) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		out[prefix+f.Name] = true
		for k := range names(f.Fields, prefix+f.Name+".") {
			out[k] = true
		}
	}
	return out
}

// keysOf lists an answer's member names as "parent.child".
func keysOf(v any, prefix string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			out = append(out, prefix+k)
			out = append(out, keysOf(sub, prefix+k+".")...)
		}
	case []any:
		for _, e := range x {
			out = append(out, keysOf(e, prefix)...)
		}
	}
	return out
}

// reply is a raw answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	require.NoError(t, d.Decode(&m), "status %d", r.status)
	return m
}

// raw sends one request as the target's client would, without its
// checks: a bearer token of the client, body as JSON, key when not "".
func (tg *target) raw(t *testing.T, method, path string, body any, key string) reply {
	t.Helper()
	tok, err := tg.client.Token(t.Context())
	require.NoError(t, err)
	return tg.rawAs(t, "Bearer "+tok, method, path, body, key)
}

func (tg *target) rawAs(t *testing.T, authorization, method, path string, body any, key string) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, tg.baseURL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", authorization)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return send(t, req)
}

func send(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// rawBody is a create-charge body in the reference's form for the
// target's account, then extra (a nil value removes a member).
func (tg *target) rawBody(typ string, extra map[string]any) map[string]any {
	a := tg.client.Account()
	b := map[string]any{
		"wallet_uuid": a.WalletUUID, "merchant_id": a.MerchantID, "payer_name": "Maria Silva",
		"payer_email": "maria.silva@example.com", "payer_tax_id": "52998224725", "payer_cell_phone": "+5511988887777",
		"installment_value": json.Number("150.00"), "installment_count": 1, "currency": "BRL",
		"due_date": tg.now().AddDate(0, 0, 7).Format(time.DateOnly), "description": tg.tag + " raw", "type_charge": typ,
		"payer_address": map[string]any{"street": "Av. Paulista", "address_number": "1000", "city": "São Paulo", "state": "SP",
			"postal_code": "01310-100", "country": "BR"},
	}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

// rawCard is the five card fields of number, expiring in three years.
func (tg *target) rawCard(number string) map[string]any {
	return map[string]any{"card_number": number, "card_name": "MARIA SILVA", "card_expiry_month": "12",
		"card_expiry_year": strconv.Itoa(tg.now().Year() + 3), "card_cvv": "123"}
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// code is the first code of err: a failed charge's first message, else
// the error's.
func code(err error) string {
	if ch, ok := a55.ChargeFromError(err); ok {
		if c := ch.Messages.Codes(); len(c) > 0 {
			return c[0]
		}
	}
	var ae *payonce.APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// The token endpoint takes the client-credentials form and answers its
// documented names; wrong credentials are refused, and a client holding
// them gets ErrUnauthorized with nothing else sent.
func TestContractToken(t *testing.T) {
	documented := names(loadRef(t).endpoint(t, "token").Response, "")
	contract(t, func(t *testing.T, tg *target) {
		post := func(secret string) reply {
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {tg.clientID}, "client_secret": {secret},
				"scope": {a55.DefaultScope}}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, tg.tokenURL, strings.NewReader(form.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return send(t, req)
		}
		r := post(tg.secret)
		require.Equal(t, http.StatusOK, r.status, "the token endpoint takes the form") // the body holds a token: never printed
		m := r.obj(t)
		for _, k := range keysOf(m, "") {
			assert.True(t, documented[k], "the token answer's %s is documented", k)
		}
		assert.NotEmpty(t, m["access_token"])
		assert.True(t, strings.EqualFold("Bearer", m["token_type"].(string)), "token_type is Bearer")
		exp, err := m["expires_in"].(json.Number).Int64()
		require.NoError(t, err, "expires_in is an integer")
		assert.Positive(t, exp)

		r = post(tg.secret + "-wrong")
		assert.Contains(t, []int{http.StatusBadRequest, http.StatusUnauthorized}, r.status, "wrong credentials are refused")
		tok, err := tg.client.Token(t.Context())
		require.NoError(t, err)
		assert.NotEmpty(t, tok)

		var s a55contract.Sandbox
		if tg.onFake() {
			s = a55contract.Sandbox{ClientID: tg.clientID, MerchantID: "m", WalletUUID: "w", BaseURL: tg.baseURL, TokenURL: tg.tokenURL}
		} else {
			s = tg.sb
		}
		s.ClientSecret = tg.secret + "-wrong"
		bad, err := s.Client(payonce.WithRetryPolicy(fastPolicy()))
		require.NoError(t, err)
		_, err = bad.Charges.Get(t.Context(), "00000000-0000-4000-8000-000000000000", "")
		assert.ErrorIs(t, err, payonce.ErrUnauthorized)
	})
}

// A wallet in the create-wallet page's form is created once under one
// key and read back by the get-wallet page's queries (by its UUID, by
// its customer and currency).
func TestContractCreateWallet(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		entity := tg.sb.EntityUUID
		if tg.onFake() {
			entity = tg.fake.EntityUUID()
		}
		if entity == "" {
			t.Skip("sandbox: set " + a55contract.EnvEntityUUID + " to create a wallet")
		}
		req := &a55.WalletCreateRequest{EntityUUID: entity, CustomerID: tg.tag, Currency: payonce.BRL, Name: tg.tag,
			Email: tg.tag + "@example.com", MerchantUUID: tg.client.Account().MerchantID}
		k := tg.key(t, "wallet")
		w, err := tg.client.Wallets.Create(t.Context(), req, payonce.WithKey(k))
		require.NoError(t, err)
		require.NotEmpty(t, w.UUID)
		assert.Nil(t, w.Credentials, "none asked for")
		again, err := tg.client.Wallets.Create(t.Context(), req, payonce.WithKey(k))
		require.NoError(t, err)
		assert.Equal(t, w.UUID, again.UUID, "the same key and body: the same wallet")
		if tg.onFake() {
			assert.Equal(t, 1, tg.fake.Ledger().Count(k.String()), "created once")
		}

		got, err := tg.client.Wallets.Get(t.Context(), &a55.WalletQuery{WalletUUID: w.UUID})
		require.NoError(t, err)
		assert.Equal(t, w.UUID, got.UUID)
		got, err = tg.client.Wallets.Get(t.Context(), &a55.WalletQuery{CustomerID: tg.tag, Currency: payonce.BRL})
		require.NoError(t, err)
		assert.Equal(t, w.UUID, got.UUID, "found by its customer and currency")
		got, err = tg.client.Wallets.Get(t.Context(), &a55.WalletQuery{Email: req.Email})
		require.NoError(t, err)
		assert.Equal(t, w.UUID, got.UUID, "found by its e-mail")
	})
}

// The account's wallet reads back by its UUID; a query naming no wallet
// is refused by the client before sending and by the server.
func TestContractGetWallet(t *testing.T) {
	never := loadRef(t).endpoint(t, "get_wallet").Never
	contract(t, func(t *testing.T, tg *target) {
		account := tg.client.Account()
		w, err := tg.client.Wallets.Get(t.Context(), &a55.WalletQuery{WalletUUID: account.WalletUUID})
		require.NoError(t, err)
		assert.Equal(t, account.WalletUUID, w.UUID)
		assert.Nil(t, w.Credentials, "a read answers no credentials")

		_, err = tg.client.Wallets.Get(t.Context(), &a55.WalletQuery{Currency: payonce.BRL})
		require.ErrorIs(t, err, payonce.ErrInvalidRequest)
		var ve *payonce.ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, "wallet_uuid", ve.Field)

		r := tg.raw(t, http.MethodGet, a55.PathWallets, nil, "")
		assert.GreaterOrEqual(t, r.status, 400, "a query naming no wallet is refused")
		assert.Less(t, r.status, 500)
		if tg.onFake() {
			assert.Equal(t, http.StatusUnprocessableEntity, r.status)
		}
		r = tg.raw(t, http.MethodGet, a55.PathWallets+"?wallet_uuid="+url.QueryEscape(account.WalletUUID), nil, "")
		require.Equal(t, http.StatusOK, r.status)
		m := r.obj(t)
		for _, n := range never {
			assert.NotContains(t, m, n)
		}
	})
}

// Each of A55's sandbox test cards (test-cards page) and the quickstart's
// three answer as the pages say: the last digit decides; 4000000000000069
// is "error" on the quickstart and "random" by its last digit, so either
// is taken from the sandbox, the quickstart's from the fake.
func TestContractCardCharges(t *testing.T) {
	type want struct {
		status a55.Status
		kind   error
		codes  []string // any of, the first the fake's
		random bool     // the sandbox may also confirm it or time it out
	}
	cards := map[string]want{
		"4024007153763191": {status: a55.StatusConfirmed},
		"4024007153763192": {kind: a55.ErrCardDeclined, codes: []string{a55.CodeNotAuthorized}},
		"4024007153763193": {kind: a55.ErrCardDeclined, codes: []string{a55.CodeExpiredCard}},
		"4024007153763195": {kind: a55.ErrCardDeclined, codes: []string{a55.CodeBlockedCard}},
		"4024007153763196": {kind: a55.ErrChargeFailed, codes: []string{a55.CodeTimeout}},
		"4111111111111111": {status: a55.StatusConfirmed},
		"4000000000000002": {kind: a55.ErrCardDeclined, codes: []string{"CARD_DECLINED", a55.CodeNotAuthorized}},
		"4000000000000069": {kind: payonce.ErrRetriesExhausted, codes: []string{"PROCESSING_ERROR", a55.CodeTimeout}, random: true},
	}
	contract(t, func(t *testing.T, tg *target) {
		for number, w := range cards {
			t.Run(number, func(t *testing.T) {
				label := "card ending " + number[len(number)-2:] // never the number: a description is echoed
				req := tg.card("100.00", number, label)
				ch, err := tg.client.Charges.Create(t.Context(), req, payonce.WithKey(tg.key(t, label)))
				if w.random && !tg.onFake() && (err == nil || errors.Is(err, a55.ErrChargeFailed)) {
					t.Logf("the sandbox decided %s by its last digit (random)", number)
					return
				}
				if w.kind == nil {
					require.NoError(t, err)
					assert.True(t, ch.Status.Is(w.status), "status %s", ch.Status)
					total, err := ch.Total()
					require.NoError(t, err)
					if !total.IsZero() {
						assert.Equal(t, "100.00", total.String())
					}
					if ch.TypeCharge != "" {
						assert.Equal(t, a55.TypeCreditCard, ch.TypeCharge)
					}
					assert.NotContains(t, string(ch.Raw()), string(req.Card.Number), "no answer holds the card")
					return
				}
				require.ErrorIs(t, err, w.kind)
				if tg.onFake() {
					assert.Equal(t, w.codes[0], code(err))
				} else {
					assert.Contains(t, w.codes, code(err))
				}
				if w.kind != payonce.ErrRetriesExhausted {
					failed, ok := a55.ChargeFromError(err)
					require.True(t, ok, "the failed charge comes back")
					assert.NotEmpty(t, failed.UUID)
					assert.True(t, failed.Status.Failed(), "status %s", failed.Status)
				}
			})
		}
	})
}

// A debit card charge with 3DS (the debit page: mandatory) waits for the
// payer's challenge, pending with its url_3ds (the sandbox may pass it
// frictionless: confirmed); the challenge's end reaches the charge.
func TestContractDebit3DS(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		req := tg.card("80.00", "4024007153763191", "debit")
		req.TypeCharge, req.ThreeDSAuthentication, req.DeviceInfo = a55.TypeDebitCard, true, deviceInfo()
		ch := tg.create(t, req)
		url3ds, challenged := ch.ChallengeURL()
		switch {
		case tg.onFake():
			assert.True(t, ch.Status.Is(a55.StatusPending))
			require.True(t, challenged)
		case ch.Status.Is(a55.StatusPending):
			assert.True(t, challenged, "pending with its url_3ds")
		default:
			assert.True(t, ch.Status.Is(a55.StatusConfirmed), "frictionless: %s", ch.Status)
		}
		if challenged {
			assert.True(t, strings.HasPrefix(url3ds, "http"))
		}
		t.Run("challenge passed", func(t *testing.T) {
			tg.fakeOnly(t, "the payer's challenge is passed by the fake's trigger")
			require.NoError(t, tg.fake.Complete3DS(ch.UUID))
			got, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusConfirmed), "%s", got.Status)
		})
		t.Run("challenge abandoned", func(t *testing.T) {
			tg.fakeOnly(t, "an abandoned challenge is the fake's trigger")
			again := tg.card("81.00", "4024007153763191", "debit 2")
			again.TypeCharge, again.ThreeDSAuthentication, again.DeviceInfo = a55.TypeDebitCard, true, deviceInfo()
			ch := tg.create(t, again)
			require.NoError(t, tg.fake.Abandon3DS(ch.UUID))
			got, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusCanceled), "%s", got.Status)
		})
	})
}

// A PIX charge (the generic endpoint, type_charge pix) is issued with
// its QR code, copy-and-paste string and expiry; paid and expired come
// later, by A55's side.
func TestContractPix(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		ch := tg.create(t, tg.method(a55.TypePix, "50.00", "pix"))
		assert.True(t, ch.Status.Is(a55.StatusIssued), "%s", ch.Status)
		require.NotNil(t, ch.Pix, "pix_payload")
		assert.NotEmpty(t, ch.Pix.QRCode)
		assert.NotEmpty(t, ch.Pix.Payload)
		_, ok := ch.Pix.Expiry()
		assert.True(t, ok, "expiration_date reads as a time")
		t.Run("paid", func(t *testing.T) {
			tg.fakeOnly(t, "a PIX is paid by the payer's bank: the fake's trigger")
			require.NoError(t, tg.fake.PayPix(ch.UUID))
			got, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusPaid), "%s", got.Status)
		})
		t.Run("expired", func(t *testing.T) {
			tg.fakeOnly(t, "a PIX expires by A55's clock: the fake's trigger")
			other := tg.create(t, tg.method(a55.TypePix, "51.00", "pix expired"))
			require.NoError(t, tg.fake.ExpirePix(other.UUID))
			got, err := tg.client.Charges.Get(t.Context(), other.UUID, "")
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusExpired), "%s", got.Status)
		})
	})
}

// The create-pix-charge page's own endpoint (amount, not
// installment_value), which the client does not use (docs/a55.md), still
// answers an issued PIX in its spelling, which the client reads.
func TestContractPixEndpoint(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		body := tg.rawBody("pix", map[string]any{"type_charge": nil, "installment_value": nil, "installment_count": nil,
			"amount": json.Number("52.00"), "description": tg.tag + " pix endpoint"})
		r := tg.raw(t, http.MethodPost, "/api/v1/bank/wallet/charge/pix/", body, tg.key(t, "pix endpoint").String())
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var ch a55.Charge
		require.NoError(t, json.Unmarshal(r.body, &ch))
		assert.NotEmpty(t, ch.UUID)
		assert.True(t, ch.Status.Is(a55.StatusIssued), "%s", ch.Status)
		require.NotNil(t, ch.Pix)
		assert.NotEmpty(t, ch.Pix.QRCode, "qr_code_base64 or qr_code")
		assert.NotEmpty(t, ch.Pix.Payload, "copy_paste or payload")
	})
}

// A boleto is issued with its PDF URL and digitable line; it is paid
// later, by the payer's bank.
func TestContractBoleto(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		ch := tg.create(t, tg.method(a55.TypeBoleto, "70.00", "boleto"))
		assert.True(t, ch.Status.Is(a55.StatusIssued), "%s", ch.Status)
		assert.NotEmpty(t, ch.BoletoURL)
		assert.NotEmpty(t, ch.Barcode)
		t.Run("paid", func(t *testing.T) {
			tg.fakeOnly(t, "a boleto is paid at a bank: the fake's trigger")
			require.NoError(t, tg.fake.PayBoleto(ch.UUID))
			got, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusPaid), "%s", got.Status)
		})
	})
}

// A pre-authorisation (capture false) is confirmed with nothing captured;
// capture takes it (the fake: paid; the sandbox: paid, or pre_captured
// while the acquirer confirms).
func TestContractCapture(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		req := tg.card("120.00", "4024007153763191", "capture")
		req.Capture = a55.Bool(false)
		ch := tg.create(t, req)
		assert.True(t, ch.Status.Is(a55.StatusConfirmed), "%s", ch.Status)
		got, err := tg.client.Charges.Capture(t.Context(), &a55.CaptureRequest{ChargeUUID: ch.UUID},
			payonce.WithKey(tg.key(t, "capture")))
		require.NoError(t, err)
		if tg.onFake() {
			assert.True(t, got.Status.Is(a55.StatusPaid), "%s", got.Status)
		} else {
			assert.True(t, got.Status.Is(a55.StatusPaid) || got.Status.Is(a55.StatusPreCaptured) || got.Status.Is(a55.StatusConfirmed),
				"%s", got.Status)
		}
		t.Run("partial", func(t *testing.T) {
			tg.fakeOnly(t, "not every acquirer takes a partial capture (capture page)")
			req := tg.card("120.00", "4024007153763191", "capture part")
			req.Capture = a55.Bool(false)
			ch := tg.create(t, req)
			got, err := tg.client.Charges.Capture(t.Context(), &a55.CaptureRequest{ChargeUUID: ch.UUID,
				Amount: payoncetest.Amount("100.00"), Currency: payonce.BRL}, payonce.WithKey(tg.key(t, "capture part")))
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusPaid))
			assert.Equal(t, "100.00", got.AmountRemaining.String(), "what was captured can be refunded")
			_, err = tg.client.Charges.Capture(t.Context(), &a55.CaptureRequest{ChargeUUID: ch.UUID},
				payonce.WithKey(tg.key(t, "capture again")))
			assert.ErrorIs(t, err, a55.ErrInvalidState, "captured once")
		})
	})
}

// A captured charge is refunded in part (its status kept, less
// remaining) and then in full (refunded); more than remains is refused.
func TestContractRefund(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		ch := tg.create(t, tg.card("100.00", "4024007153763191", "refund"))
		part, err := tg.client.Charges.Refund(t.Context(), &a55.RefundRequest{ChargeUUID: ch.UUID, Amount: payoncetest.Amount("30.00"),
			Currency: payonce.BRL, Reason: "one item returned"}, payonce.WithKey(tg.key(t, "refund part")))
		require.NoError(t, err)
		if !part.AmountRemaining.IsZero() || tg.onFake() {
			assert.Equal(t, "70.00", part.AmountRemaining.String())
		}
		if tg.onFake() {
			assert.True(t, part.Status.Is(a55.StatusConfirmed), "a partial refund keeps the status: %s", part.Status)
		}
		full, err := tg.client.Charges.Refund(t.Context(), &a55.RefundRequest{ChargeUUID: ch.UUID},
			payonce.WithKey(tg.key(t, "refund rest")))
		require.NoError(t, err)
		assert.True(t, full.Status.Is(a55.StatusRefunded), "%s", full.Status)
		got, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
		require.NoError(t, err)
		assert.True(t, got.Status.Is(a55.StatusRefunded), "%s", got.Status)

		_, err = tg.client.Charges.Refund(t.Context(), &a55.RefundRequest{ChargeUUID: ch.UUID, Amount: payoncetest.Amount("1.00"),
			Currency: payonce.BRL}, payonce.WithKey(tg.key(t, "refund more")))
		require.Error(t, err, "no more than amount_remaining")
		assert.NotErrorIs(t, err, payonce.ErrTransport)
		if tg.onFake() {
			assert.ErrorIs(t, err, a55.ErrInvalidState)
		}
	})
}

// A pre-authorisation is canceled; canceling it again, or canceling a
// captured charge, is an illegal move (cancel page: 409 already canceled
// or settled, 400 CANCEL_NOT_ALLOWED).
func TestContractCancel(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		req := tg.card("90.00", "4024007153763191", "cancel")
		req.Capture = a55.Bool(false)
		ch := tg.create(t, req)
		got, err := tg.client.Charges.Cancel(t.Context(), &a55.CancelRequest{ChargeUUID: ch.UUID, Reason: "customer asked"},
			payonce.WithKey(tg.key(t, "cancel")))
		require.NoError(t, err)
		assert.True(t, got.Status.Is(a55.StatusCanceled), "%s", got.Status)
		_, err = tg.client.Charges.Cancel(t.Context(), &a55.CancelRequest{ChargeUUID: ch.UUID}, payonce.WithKey(tg.key(t, "cancel again")))
		assert.ErrorIs(t, err, a55.ErrInvalidState, "already canceled")

		captured := tg.create(t, tg.card("91.00", "4024007153763191", "cancel captured"))
		_, err = tg.client.Charges.Cancel(t.Context(), &a55.CancelRequest{ChargeUUID: captured.UUID},
			payonce.WithKey(tg.key(t, "cancel captured")))
		assert.ErrorIs(t, err, a55.ErrInvalidState, "settled: refund it instead")
	})
}

// A charge reads back by both documented forms (the get-charge page's
// query, the webhook page's path); an unknown one is not found.
func TestContractGet(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		ch := tg.create(t, tg.card("60.00", "4024007153763191", "get"))
		byQuery, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
		require.NoError(t, err)
		byPath, err := tg.client.Charges.Fetch(t.Context(), ch.UUID)
		require.NoError(t, err)
		for _, got := range []*a55.Charge{byQuery, byPath} {
			assert.Equal(t, ch.UUID, got.UUID)
			assert.True(t, got.Status.Is(ch.Status), "%s", got.Status)
			if got.WalletUUID != "" {
				assert.Equal(t, tg.client.Account().WalletUUID, got.WalletUUID)
			}
		}
		unknown := "00000000-0000-4000-8000-000000000000"
		_, err = tg.client.Charges.Get(t.Context(), unknown, "")
		assert.ErrorIs(t, err, payonce.ErrNotFound)
		_, err = tg.client.Charges.Fetch(t.Context(), unknown)
		assert.ErrorIs(t, err, payonce.ErrNotFound)
	})
}

// The list takes every documented filter (merchant, status, type, card
// brand, amount range, dates), both sorts and paging.
func TestContractList(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		small := tg.create(t, tg.card("100.00", "4024007153763191", "list"))
		large := tg.create(t, tg.card("250.00", "4024007153763191", "list"))
		pix := tg.create(t, tg.method(a55.TypePix, "50.00", "list"))
		now := tg.now()
		base := a55.ChargeListOptions{Description: tg.tag + " list", DateStart: now.Add(-time.Hour), DateEnd: now.Add(time.Hour), Limit: 100}
		list := func(mod func(*a55.ChargeListOptions)) []string {
			t.Helper()
			o := base
			mod(&o)
			page, err := tg.client.Charges.List(t.Context(), &o)
			require.NoError(t, err)
			var ids []string
			for _, c := range page.Charges {
				ids = append(ids, c.UUID)
			}
			return ids
		}
		all := []string{small.UUID, large.UUID, pix.UUID}
		assert.ElementsMatch(t, all, list(func(*a55.ChargeListOptions) {}))
		assert.ElementsMatch(t, all, list(func(o *a55.ChargeListOptions) { o.MerchantUUID = tg.client.Account().MerchantID }))
		assert.ElementsMatch(t, []string{small.UUID, large.UUID}, list(func(o *a55.ChargeListOptions) { o.Status = a55.StatusConfirmed }))
		assert.ElementsMatch(t, []string{pix.UUID}, list(func(o *a55.ChargeListOptions) { o.Type = a55.TypePix }))
		assert.ElementsMatch(t, []string{small.UUID, large.UUID}, list(func(o *a55.ChargeListOptions) { o.CardBrand = "Visa" }))
		assert.ElementsMatch(t, []string{large.UUID}, list(func(o *a55.ChargeListOptions) { o.AmountGTE = payoncetest.Amount("200.00") }))
		assert.ElementsMatch(t, []string{small.UUID, pix.UUID}, list(func(o *a55.ChargeListOptions) { o.AmountLTE = payoncetest.Amount("150.00") }))
		assert.Empty(t, list(func(o *a55.ChargeListOptions) {
			o.DateStart, o.DateEnd = now.Add(-72*time.Hour), now.Add(-48*time.Hour)
		}))

		for _, sort := range []a55.ChargeSort{a55.SortCreatedAsc, a55.SortCreatedDesc} {
			o := base
			o.Sort = sort
			page, err := tg.client.Charges.List(t.Context(), &o)
			require.NoError(t, err)
			require.Len(t, page.Charges, 3, sort)
			for i := 1; i < len(page.Charges); i++ {
				a, b := page.Charges[i-1].CreatedAt, page.Charges[i].CreatedAt
				if sort == a55.SortCreatedAsc {
					assert.False(t, b.Before(a), "%s: in order", sort)
				} else {
					assert.False(t, a.Before(b), "%s: in order", sort)
				}
			}
		}
		o := base
		o.Limit = 2
		var paged []string
		for ch, err := range tg.client.Charges.All(t.Context(), &o) {
			require.NoError(t, err)
			paged = append(paged, ch.UUID)
		}
		assert.ElementsMatch(t, all, paged, "page after page")
	})
}

// loseFirstAnswer drops the answer to the first POST to path after the
// server made it: the connection is lost once the operation ran.
type loseFirstAnswer struct {
	base http.RoundTripper
	path string
	lost atomic.Bool
	mu   sync.Mutex
	keys []string // the Idempotency-Key of every POST to path
}

func (l *loseFirstAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if r.Method != http.MethodPost || r.URL.Path != l.path {
		return resp, err
	}
	l.mu.Lock()
	l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
	l.mu.Unlock()
	if err == nil && l.lost.CompareAndSwap(false, true) {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset after the server answered")}
	}
	return resp, err
}

// One key is one operation: the same key and body give the same charge,
// the same key with another body is a conflict, and an answer lost after
// the charge was made is recovered by looking the charge up before the
// key is sent again, one charge in the end (the list shows one; the fake's ledger too).
func TestContractIdempotency(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		req := tg.card("44.00", "4024007153763191", "idempotency")
		k := tg.key(t, "same")
		first, err := tg.client.Charges.Create(t.Context(), req, payonce.WithKey(k))
		require.NoError(t, err)
		second, err := tg.client.Charges.Create(t.Context(), req, payonce.WithKey(k))
		require.NoError(t, err)
		assert.Equal(t, first.UUID, second.UUID, "the same key and body: the same charge")

		other := tg.card("45.00", "4024007153763191", "idempotency")
		_, err = tg.client.Charges.Create(t.Context(), other, payonce.WithKey(k))
		assert.ErrorIs(t, err, payonce.ErrIdempotencyConflict, "the same key, another body")
		if tg.onFake() {
			assert.Equal(t, 1, tg.fake.Ledger().Count(k.String()), "executed once")
		}

		lose := &loseFirstAnswer{base: http.DefaultTransport, path: a55.PathCharges}
		c, err := tg.build(payonce.WithHTTPClient(&http.Client{Transport: lose}))
		require.NoError(t, err)
		lost := tg.card("46.00", "4024007153763191", "lost answer")
		ch, err := c.Charges.Create(t.Context(), lost)
		require.NoError(t, err, "the charge is found before the key is sent again")
		require.Len(t, lose.keys, 1, "not sent again: A55 keeps no answer but a 2xx under the key")
		page, err := tg.client.Charges.List(t.Context(), &a55.ChargeListOptions{Description: lost.Description,
			DateStart: tg.now().Add(-time.Hour), DateEnd: tg.now().Add(time.Hour), Limit: 100})
		require.NoError(t, err)
		require.Len(t, page.Charges, 1, "one charge")
		assert.Equal(t, ch.UUID, page.Charges[0].UUID)
		if tg.onFake() {
			assert.Equal(t, 1, tg.fake.Ledger().Count(lose.keys[0]), "executed once")
		}
	})
}

// A55's error shapes: 401 for a token it did not issue, 404 for an
// unknown charge, 400/422 for a body the reference refuses (the fake:
// the general shape naming the member), and a declined card in the
// charge-level shape (charge_uuid, status, message[{code, source,
// description}]).
func TestContractErrorShapes(t *testing.T) {
	documented := names(loadRef(t).endpoint(t, "create_charge").Response, "")
	contract(t, func(t *testing.T, tg *target) {
		r := tg.rawAs(t, "Bearer not-a-token-it-issued", http.MethodGet, a55.PathCharges+"?charge_uuid=x&wallet_uuid=y", nil, "")
		assert.Equal(t, http.StatusUnauthorized, r.status)
		s := tg.sb
		if tg.onFake() {
			s = a55contract.Sandbox{BaseURL: tg.baseURL}
		}
		opts := []payonce.Option{a55.WithEnvironment(a55.Sandbox), payonce.WithRetryPolicy(fastPolicy())}
		if s.BaseURL != "" {
			opts = append(opts, payonce.WithBaseURL(s.BaseURL))
		}
		bad, err := a55.NewClient(a55.AccessToken("not-a-token-it-issued"), opts...)
		require.NoError(t, err)
		_, err = bad.Charges.Fetch(t.Context(), "00000000-0000-4000-8000-000000000000")
		assert.ErrorIs(t, err, payonce.ErrUnauthorized)

		r = tg.raw(t, http.MethodGet, a55.PathCharges+"00000000-0000-4000-8000-000000000000/", nil, "")
		assert.Equal(t, http.StatusNotFound, r.status)

		for name, body := range map[string]map[string]any{
			"payer_email":       tg.rawBody("pix", map[string]any{"payer_email": nil}),
			"installment_value": tg.rawBody("pix", map[string]any{"installment_value": "150.00"}),
		} {
			r := tg.raw(t, http.MethodPost, a55.PathCharges, body, tg.key(t, "refused "+name).String())
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, r.status, "%s: %s", name, r.body)
			if tg.onFake() {
				var e struct {
					Error struct {
						Code    string              `json:"code"`
						Details []map[string]string `json:"details"`
					} `json:"error"`
					RequestID string `json:"request_id"`
				}
				require.NoError(t, json.Unmarshal(r.body, &e))
				require.NotEmpty(t, e.Error.Details, name)
				assert.Equal(t, name, e.Error.Details[0]["field"])
				assert.NotEmpty(t, e.RequestID)
			}
		}

		r = tg.raw(t, http.MethodPost, a55.PathCharges, merge(tg.rawBody("credit_card", nil), tg.rawCard(tg.cardNumber("4024007153763192"))),
			tg.key(t, "declined").String())
		assert.Contains(t, []int{http.StatusOK, http.StatusBadRequest, http.StatusPaymentRequired, http.StatusUnprocessableEntity}, r.status)
		m := r.obj(t)
		for _, k := range keysOf(m, "") {
			assert.True(t, documented[k], "a declined charge's %s is documented", k)
		}
		assert.NotEmpty(t, m["charge_uuid"])
		assert.Contains(t, []any{"error", "declined"}, m["status"])
		msgs, ok := m["message"].([]any)
		require.True(t, ok, "message is a list")
		require.NotEmpty(t, msgs)
		first := msgs[0].(map[string]any)
		assert.Equal(t, a55.CodeNotAuthorized, first["code"])
		assert.NotEmpty(t, first["description"])
	})
}

// The codes of the code-response page no test card gives, answered on
// demand by the fake's answer rules: what the client does with each.
func TestContractCodes(t *testing.T) {
	contract(t, func(t *testing.T, tg *target) {
		tg.fakeOnly(t, "A55 answers these codes when its acquirers do; the fake's answer rules give them on demand")
		srv := tg.fake
		t.Run("TIMEOUT", func(t *testing.T) {
			require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerTimeout, Executed: true, Path: a55test.ChargePath, Count: 1}))
			k := tg.key(t, "timeout")
			ch, err := tg.client.Charges.Create(t.Context(), tg.card("10.00", "4024007153763191", "timeout"), payonce.WithKey(k))
			require.NoError(t, err, "looked up, found confirmed")
			assert.True(t, ch.Status.Is(a55.StatusConfirmed))
			assert.Equal(t, 1, srv.Ledger().Count(k.String()), "never sent again")
		})
		t.Run("DUPLICATE_REQUEST", func(t *testing.T) {
			k := tg.key(t, "duplicate")
			req := tg.card("11.00", "4024007153763191", "duplicate")
			first, err := tg.client.Charges.Create(t.Context(), req, payonce.WithKey(k))
			require.NoError(t, err)
			require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerDuplicateRequest, IdempotencyKey: k.String(), Count: 1}))
			again, err := tg.client.Charges.Create(t.Context(), req, payonce.WithKey(k))
			require.NoError(t, err)
			assert.Equal(t, first.UUID, again.UUID, "the original charge")
			assert.True(t, again.Meta.Replayed)
		})
		t.Run("3DS_REQUIRED", func(t *testing.T) {
			require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.Answer3DSRequired, Path: a55test.ChargePath, Count: 1}))
			_, err := tg.client.Charges.Create(t.Context(), tg.card("12.00", "4024007153763191", "3ds required"))
			require.ErrorIs(t, err, a55.ErrThreeDSRequired)
			assert.NotErrorIs(t, err, a55.ErrCardDeclined, "an action, not a decline")
			_, ok := a55.ChallengeURL(err)
			assert.True(t, ok)
		})
		t.Run("3DS_UNAVAILABLE", func(t *testing.T) {
			require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.Answer3DSUnavailable, Path: a55test.ChargePath, Count: 1}))
			_, err := tg.client.Charges.Create(t.Context(), tg.card("13.00", "4024007153763191", "3ds unavailable"))
			require.ErrorIs(t, err, payonce.ErrRetriesExhausted, "60 s is more than the policy waits")
			assert.True(t, payonce.IsResumable(err), "resumable with its key")
		})
		t.Run("PROCESSING_ERROR", func(t *testing.T) {
			require.NoError(t, srv.AddAnswer(a55test.Answer{Code: a55test.AnswerProcessingError, Path: a55test.ChargePath, Count: 1}))
			k := tg.key(t, "processing")
			ch, err := tg.client.Charges.Create(t.Context(), tg.card("14.00", "4024007153763191", "processing"), payonce.WithKey(k))
			require.NoError(t, err, "retried under the same key")
			assert.Equal(t, 2, ch.Meta.Attempts)
			assert.Equal(t, 1, srv.Ledger().Count(k.String()))
		})
		t.Run("3DS_FAILED", func(t *testing.T) {
			req := tg.card("15.00", "4024007153763191", "3ds failed")
			req.TypeCharge, req.ThreeDSAuthentication, req.DeviceInfo = a55.TypeDebitCard, true, deviceInfo()
			ch := tg.create(t, req)
			require.NoError(t, srv.Fail3DS(ch.UUID))
			got, err := tg.client.Charges.Get(t.Context(), ch.UUID, "")
			require.NoError(t, err)
			assert.True(t, got.Status.Is(a55.StatusError))
			assert.Equal(t, []string{"3DS_FAILED"}, got.Messages.Codes())
		})
		for name, tc := range map[string]struct {
			body map[string]any
			code string
		}{
			"currency":   {tg.rawBody("pix", map[string]any{"currency": "MXN"}), "CURRENCY_NOT_SUPPORTED"},
			"amount":     {tg.rawBody("pix", map[string]any{"currency": "BRL", "installment_value": json.Number("100.505")}), "AMOUNT_INVALID"},
			"card":       {merge(tg.rawBody("credit_card", nil), tg.rawCard("12")), "INVALID_CARD"},
			"expiry":     {merge(tg.rawBody("credit_card", nil), tg.rawCard("4024007153763191"), map[string]any{"card_expiry_year": "2001"}), "EXPIRED_CARD"},
			"cvc":        {merge(tg.rawBody("credit_card", nil), tg.rawCard("4024007153763191"), map[string]any{"card_cvv": "1"}), "INVALID_CVC"},
			"validation": {tg.rawBody("pix", map[string]any{"payer_address": nil}), "VALIDATION_ERROR"},
		} {
			r := tg.raw(t, http.MethodPost, a55.PathCharges, tc.body, "")
			require.Equal(t, http.StatusUnprocessableEntity, r.status, name)
			assert.Equal(t, tc.code, r.obj(t)["error"].(map[string]any)["code"], name)
		}
		t.Run("RATE_LIMIT_EXCEEDED", func(t *testing.T) {
			srv.SetRateLimit(1, time.Minute)
			t.Cleanup(func() { srv.SetRateLimit(-1, time.Minute) })
			path := a55.PathCharges + "00000000-0000-4000-8000-000000000000/"
			tg.raw(t, http.MethodGet, path, nil, "")
			r := tg.raw(t, http.MethodGet, path, nil, "")
			require.Equal(t, http.StatusTooManyRequests, r.status)
			assert.Equal(t, "RATE_LIMIT_EXCEEDED", r.obj(t)["error"].(map[string]any)["code"])
			assert.NotEmpty(t, r.header.Get("Retry-After"))
			assert.Equal(t, "1", r.header.Get("X-RateLimit-Limit"))
		})
	})
}

// Every documented status reaches the client and reads as its constant:
// those a call gives at once, and those A55's side gives later, from the
// fake's triggers.
func TestContractStatuses(t *testing.T) {
	doc := loadRef(t).Statuses
	contract(t, func(t *testing.T, tg *target) {
		tg.fakeOnly(t, "most statuses come from A55's side (a PIX paid, a chargeback); the calls' own are in the other contract tests")
		srv := tg.fake
		reached := map[a55.Status]bool{}
		see := func(uuid string) {
			t.Helper()
			ch, err := tg.client.Charges.Get(t.Context(), uuid, "")
			require.NoError(t, err)
			require.True(t, ch.Status.Known(), "%s", ch.Status)
			reached[ch.Status] = true
		}
		card := func(label string) string { return tg.create(t, tg.card("20.00", "4024007153763191", label)).UUID }
		pix := func(label string) string { return tg.create(t, tg.method(a55.TypePix, "20.00", label)).UUID }

		see(pix("issued"))
		p := pix("paid")
		require.NoError(t, srv.PayPix(p))
		see(p)
		p = pix("expired")
		require.NoError(t, srv.ExpirePix(p))
		see(p)
		d := tg.card("20.00", "4024007153763191", "pending")
		d.TypeCharge, d.ThreeDSAuthentication, d.DeviceInfo = a55.TypeDebitCard, true, deviceInfo()
		see(tg.create(t, d).UUID)
		c := card("confirmed")
		see(c)
		_, err := tg.client.Charges.Create(t.Context(), tg.card("20.00", "4024007153763192", "error"))
		failed, ok := a55.ChargeFromError(err)
		require.True(t, ok)
		see(failed.UUID)
		_, err = tg.client.Charges.Create(t.Context(), tg.card("20.00", "4000000000000002", "declined"))
		failed, ok = a55.ChargeFromError(err)
		require.True(t, ok)
		see(failed.UUID)
		pre := tg.card("20.00", "4024007153763191", "canceled")
		pre.Capture = a55.Bool(false)
		c = tg.create(t, pre).UUID
		_, err = tg.client.Charges.Cancel(t.Context(), &a55.CancelRequest{ChargeUUID: c})
		require.NoError(t, err)
		see(c)
		pre = tg.card("21.00", "4024007153763191", "pre_captured")
		pre.Capture = a55.Bool(false)
		c = tg.create(t, pre).UUID
		require.NoError(t, srv.SubmitCapture(c))
		see(c)
		c = card("refunded")
		require.NoError(t, srv.Refund(c, ""))
		see(c)
		c = card("refund_error")
		require.NoError(t, srv.FailRefund(c, ""))
		see(c)
		c = card("chargeback_requested")
		require.NoError(t, srv.Chargeback(c, "fraud"))
		see(c)
		require.NoError(t, srv.ChargebackPreResolution(c))
		see(c)
		require.NoError(t, srv.ReverseChargeback(c))
		see(c)
		c = card("chargeback_refunded")
		require.NoError(t, srv.Chargeback(c, "fraud"))
		require.NoError(t, srv.RefundChargeback(c))
		see(c)
		c = card("chargeback")
		require.NoError(t, srv.LoseChargeback(c, "fraud"))
		see(c)
		var want []a55.Status
		for _, s := range doc {
			want = append(want, a55.Status(s.Name))
		}
		var got []a55.Status
		for s := range reached {
			got = append(got, s)
		}
		assert.ElementsMatch(t, want, got, "every documented status reached the client")
	})
}

// A charge's webhook is signed (X-Webhook-Signature over the timestamp
// and the raw body) and holds only the charge-webhook page's names. The
// sandbox delivers to A55_SANDBOX_WEBHOOK_URL, which must reach
// A55_SANDBOX_WEBHOOK_LISTEN.
func TestContractWebhook(t *testing.T) {
	doc := loadRef(t).Webhook
	documented := names(doc.Fields, "")
	contract(t, func(t *testing.T, tg *target) {
		secret, listen, public := tg.sb.WebhookSecret, tg.sb.WebhookListen, tg.sb.WebhookURL
		if tg.onFake() {
			secret, listen = tg.fake.WebhookSecret(), "127.0.0.1:0"
		}
		if secret == "" || listen == "" {
			t.Skip("sandbox: set " + a55contract.EnvWebhookSecret + ", " + a55contract.EnvWebhookURL + " and " +
				a55contract.EnvWebhookListen + " to receive its webhooks")
		}
		type delivery struct {
			header http.Header
			body   []byte
		}
		got := make(chan delivery, 100)
		ln, err := net.Listen("tcp", listen)
		require.NoError(t, err)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(io.LimitReader(r.Body, a55.MaxWebhookBody))
			select {
			case got <- delivery{r.Header.Clone(), b}:
			default:
			}
			w.WriteHeader(http.StatusOK)
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		if public == "" { // the fake's loopback receiver
			public = "http://" + ln.Addr().String() + "/hooks/a55"
		}
		req := tg.card("33.00", "4024007153763191", "webhook")
		req.WebhookURL = public
		ch := tg.create(t, req)
		if tg.onFake() {
			tg.fake.DeliverDueWebhooks()
		}
		verifier, err := a55.NewWebhookVerifier(secret, tg.now)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		for {
			var d delivery
			select {
			case d = <-got:
			case <-ctx.Done():
				require.FailNow(t, "no webhook of the charge arrived")
			}
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(d.body))
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m))
			if m["charge_uuid"] != ch.UUID {
				continue // another charge's, on a shared receiver
			}
			for _, h := range doc.Headers {
				assert.NotEmpty(t, d.header.Get(h), h)
			}
			require.NoError(t, verifier.Verify(d.header, d.body), "signed with the secret")
			for _, k := range keysOf(m, "") {
				assert.True(t, documented[k], "the webhook's %s is documented", k)
			}
			assert.True(t, a55.Status(m["status"].(string)).Known())
			return
		}
	})
}
