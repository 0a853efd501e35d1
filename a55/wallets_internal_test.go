package a55

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// walletReq is the create-wallet page's example request.
func walletReq() *WalletCreateRequest {
	return &WalletCreateRequest{EntityUUID: "550e8400-e29b-41d4-a716-446655440000", CustomerID: "cust_12345", Currency: payonce.BRL,
		Name: "Loja São Paulo — BRL", Email: "financeiro@loja-sp.com.br", CreateCredentials: true,
		MerchantUUID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8"}
}

// walletAnswer is a create-wallet answer with credentials.
const walletAnswer = `{"wallet_uuid":"f47ac10b-58cc-4372-a567-0e02b2c3d479","entity_uuid":"550e8400-e29b-41d4-a716-446655440000",` +
	`"merchant_uuid":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","customer_id":"cust_12345","name":"Loja","email":"financeiro@loja-sp.com.br",` +
	`"currency":"BRL","status":"active","created_at":"2026-12-01T10:00:00Z",` +
	`"credentials":{"client_id":"wallet-client-4711","client_secret":"wallet-secret-s3cr3t-4711"}}`

// The body of a wallet create holds only the create-wallet page's names,
// every required one (create_credentials even when false).
func TestWalletWireNamesAreTheReference(t *testing.T) {
	ref := loadReference(t)
	e := ref.endpoint(t, "create_wallet")
	u := setup(t)
	var bodies [][]byte
	u.mux.HandleFunc("POST "+PathWallets, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		writeJSON(w, 200, walletAnswer)
	})
	minimal := walletReq()
	minimal.MerchantUUID, minimal.CreateCredentials = "", false
	for _, req := range []*WalletCreateRequest{walletReq(), minimal} {
		_, err := u.client.Wallets.Create(context.Background(), req)
		require.NoError(t, err)
	}
	require.Len(t, bodies, 2)
	for _, b := range bodies {
		m := decodeWire(t, b)
		checkDocumented(t, "create_wallet: ", m, e.Request)
		checkRequired(t, "create_wallet: ", m, e.Request)
	}
	assert.Contains(t, string(bodies[1]), `"create_credentials":false`)
}

// For each field the create-wallet page requires, a request without it is
// refused naming it, nothing sent.
func TestEveryRequiredWalletFieldIsRefusedBeforeSending(t *testing.T) {
	ref := loadReference(t)
	u := setup(t)
	hits := counted(u)
	blank := map[string]func(*WalletCreateRequest){
		"entity_uuid": func(r *WalletCreateRequest) { r.EntityUUID = "" },
		"customer_id": func(r *WalletCreateRequest) { r.CustomerID = "" },
		"currency":    func(r *WalletCreateRequest) { r.Currency = "" },
		"name":        func(r *WalletCreateRequest) { r.Name = "" },
		"email":       func(r *WalletCreateRequest) { r.Email = "" },
	}
	for _, f := range ref.endpoint(t, "create_wallet").Request {
		if !f.Required || f.Type == "boolean" { // a boolean is always sent
			continue
		}
		b, ok := blank[f.Name]
		require.True(t, ok, "the test knows how to leave out %s", f.Name)
		req := walletReq()
		b(req)
		_, err := u.client.Wallets.Create(context.Background(), req)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), "%s: %v", f.Name, err)
		assert.Equal(t, f.Name, ve.Field)
	}
	for name, mut := range map[string]func(*WalletCreateRequest){
		"COP wallet": func(r *WalletCreateRequest) { r.Currency = payonce.COP },
		"bad e-mail": func(r *WalletCreateRequest) { r.Email = "finance" },
		"spaced ID":  func(r *WalletCreateRequest) { r.MerchantUUID = "a b" },
	} {
		req := walletReq()
		mut(req)
		_, err := u.client.Wallets.Create(context.Background(), req)
		assert.ErrorIs(t, err, payonce.ErrInvalidRequest, name)
	}
	_, err := u.client.Wallets.Create(context.Background(), nil)
	assert.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Zero(t, hits.Load())
	assert.Zero(t, u.tokens.Load())
}

// A wallet's ID is read from wallet_uuid (create-wallet) or uuid
// (quickstart, whose IDs are not UUIDs), and every documented answer
// name reads into the Wallet.
func TestWalletAnswerReadsEverySpelling(t *testing.T) {
	var w Wallet
	require.NoError(t, Codec{}.DecodeSuccess(200, nil, []byte(`{"uuid":"wal_a1b2c3d4-e5f6-7890-abcd-ef1234567890","name":"My First Wallet","status":"active"}`), &w))
	assert.Equal(t, "wal_a1b2c3d4-e5f6-7890-abcd-ef1234567890", w.UUID)
	assert.Equal(t, "active", w.Status)
	require.Error(t, Codec{}.DecodeSuccess(200, nil, []byte(`{"name":"no id"}`), new(Wallet)), "a wallet answer names its wallet")

	ref := loadReference(t)
	empty := Wallet{UUID: "base"}
	for _, f := range ref.endpoint(t, "create_wallet").Response {
		doc := map[string]any{"wallet_uuid": "base", f.Name: sampleValue(f)}
		if f.Name == "wallet_uuid" || f.Alias == "wallet_uuid" {
			doc = map[string]any{f.Name: "other"}
		}
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		var got Wallet
		require.NoError(t, Codec{}.DecodeSuccess(200, nil, b, &got), "%s", b)
		assert.False(t, reflect.DeepEqual(empty, got), "documented wallet field %s is not read", f.Name)
	}
}

// A wallet's OAuth credentials reach the caller from the live answer
// only: no printed form, log record, JSON form or journal row holds them,
// and the same call answered from the journal says they are withheld.
func TestWalletCredentialsFromTheLiveAnswerOnly(t *testing.T) {
	var logged bytes.Buffer
	j := journal.NewMemory()
	u := setup(t, payonce.WithJournal(j), payonce.WithLogger(slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	calls := 0
	u.mux.HandleFunc("POST "+PathWallets, func(w http.ResponseWriter, r *http.Request) {
		calls++
		writeJSON(w, 200, walletAnswer)
	})
	w, err := u.client.Wallets.Create(context.Background(), walletReq(), payonce.WithReference("wallet-1"))
	require.NoError(t, err)
	require.NotNil(t, w.Credentials)
	assert.Equal(t, WalletCredentials{ClientID: "wallet-client-4711", ClientSecret: "wallet-secret-s3cr3t-4711"}, *w.Credentials)
	assert.False(t, w.CredentialsWithheld)

	var printed []string
	for _, v := range []any{w, *w, w.Credentials, *w.Credentials} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			printed = append(printed, fmt.Sprintf(verb, v))
		}
	}
	b, err := json.Marshal(w)
	require.NoError(t, err)
	printed = append(printed, string(b))
	b, err = json.Marshal(w.Credentials)
	require.NoError(t, err)
	printed = append(printed, string(b))
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("wallet", "wallet", w, "credentials", w.Credentials)
	printed = append(printed, logged.String())
	e, err := j.Get(context.Background(), u.client.Core().Scope(), "wallet-1")
	require.NoError(t, err)
	printed = append(printed, string(e.Result), e.Summary, e.LastCause)
	for _, s := range printed {
		assert.NotContains(t, s, "wallet-secret-s3cr3t-4711")
		assert.NotContains(t, strings.ToLower(s), "s3cr3t")
	}
	assert.NotContains(t, string(e.Result), "wallet-client-4711", "the journal keeps neither half of the credentials")

	again, err := u.client.Wallets.Create(context.Background(), walletReq(), payonce.WithReference("wallet-1"))
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.Equal(t, 1, calls, "answered from the journal")
	assert.Nil(t, again.Credentials)
	assert.True(t, again.CredentialsWithheld, "the replay says the credentials are withheld")
	assert.Equal(t, w.UUID, again.UUID)
}

// Wallets.Get sends only the get-wallet page's query names, each query
// holding one of its one_of names, and reads the answer as a create's:
// every documented name, the ID from wallet_uuid or uuid.
func TestWalletGetQueryNamesAreTheReference(t *testing.T) {
	ref := loadReference(t)
	e := ref.endpoint(t, "get_wallet")
	require.Equal(t, PathWallets, e.Path)
	u := setup(t)
	var queries []url.Values
	u.mux.HandleFunc("GET "+PathWallets, func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.Query())
		writeJSON(w, 200, strings.Replace(walletAnswer, `"wallet_uuid"`, `"uuid"`, 1))
	})
	for _, q := range []*WalletQuery{
		{WalletUUID: "f47ac10b-58cc-4372-a567-0e02b2c3d479"},
		{Email: "financeiro@loja-sp.com.br"},
		{CustomerID: "cust_12345", Currency: payonce.BRL},
		{WalletUUID: "f47ac10b-58cc-4372-a567-0e02b2c3d479", Email: "financeiro@loja-sp.com.br", CustomerID: "cust_12345", Currency: payonce.BRL},
	} {
		w, err := u.client.Wallets.Get(context.Background(), q)
		require.NoError(t, err, "%+v", q)
		assert.Equal(t, "f47ac10b-58cc-4372-a567-0e02b2c3d479", w.UUID, "read as a create's answer: uuid too")
		assert.Equal(t, "cust_12345", w.CustomerID)
		assert.Equal(t, payonce.BRL, w.Currency)
	}
	require.Len(t, queries, 4)
	for _, q := range queries {
		given := 0
		for name := range q {
			f, ok := field(e.Query, name)
			assert.True(t, ok && !f.FakeOnly, "query %s is documented", name)
			if len(f.Enum) > 0 {
				assert.Contains(t, f.Enum, q.Get(name))
			}
		}
		for _, name := range e.OneOf {
			if q.Get(name) != "" {
				given++
			}
		}
		assert.Positive(t, given, "%v holds one of %v", q, e.OneOf)
	}
	assert.Equal(t, url.Values{"customer_id": {"cust_12345"}, "currency": {"BRL"}}, queries[2], "only what the query sets")
}

// A query the get-wallet page would refuse is refused before anything is
// sent, naming the field: none of wallet_uuid, email or customer_id, a
// malformed one, a currency wallets do not hold.
func TestWalletGetRefusesAQueryBeforeSending(t *testing.T) {
	u := setup(t)
	hits := counted(u)
	for name, tc := range map[string]struct {
		q     *WalletQuery
		field string
	}{
		"nil":           {nil, ""},
		"empty":         {&WalletQuery{}, "wallet_uuid"},
		"currency only": {&WalletQuery{Currency: payonce.BRL}, "wallet_uuid"},
		"bad e-mail":    {&WalletQuery{Email: "finance"}, "email"},
		"spaced ID":     {&WalletQuery{WalletUUID: "a b"}, "wallet_uuid"},
		"long customer": {&WalletQuery{CustomerID: strings.Repeat("c", 129)}, "customer_id"},
		"COP":           {&WalletQuery{CustomerID: "cust_1", Currency: payonce.COP}, "currency"},
		"control char":  {&WalletQuery{Email: "a\x00@b.example"}, "email"},
	} {
		_, err := u.client.Wallets.Get(context.Background(), tc.q)
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, name)
		var ve *payonce.ValidationError
		require.True(t, errors.As(err, &ve), name)
		assert.Equal(t, tc.field, ve.Field, name)
	}
	assert.Zero(t, hits.Load())
	assert.Zero(t, u.tokens.Load())
}

// The wallet a read answers is the query's: an answer naming another
// wallet, e-mail, customer or currency than the query gave is a malformed
// answer, never taken for the wallet asked for; an answer naming no
// wallet is one too.
func TestWalletGetRefusesAnotherWallet(t *testing.T) {
	u := setup(t)
	answer := walletAnswer
	u.mux.HandleFunc("GET "+PathWallets, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, answer) })
	for name, q := range map[string]*WalletQuery{
		"wallet":   {WalletUUID: "another-wallet"},
		"email":    {Email: "other@loja.example"},
		"customer": {CustomerID: "cust_other"},
		"currency": {CustomerID: "cust_12345", Currency: payonce.MXN},
	} {
		_, err := u.client.Wallets.Get(context.Background(), q)
		assert.ErrorIs(t, err, payonce.ErrMalformedResponse, name)
	}
	w, err := u.client.Wallets.Get(context.Background(), &WalletQuery{Email: "FINANCEIRO@loja-sp.com.br"})
	require.NoError(t, err, "an e-mail in another case is the same")
	assert.Equal(t, "f47ac10b-58cc-4372-a567-0e02b2c3d479", w.UUID)
	for _, a := range []string{`{}`, `{"name":"no id"}`, `[` + walletAnswer + `]`, ``} {
		answer = a
		_, err := u.client.Wallets.Get(context.Background(), &WalletQuery{CustomerID: "cust_12345"})
		assert.ErrorIs(t, err, payonce.ErrMalformedResponse, a)
	}
}

// A wallet read is never journaled (a reference is refused, nothing
// sent), and credentials an answer holds reach the caller only: no log
// record or printed form holds the secret.
func TestWalletGetNeverPersistsCredentials(t *testing.T) {
	var logged bytes.Buffer
	u := setup(t, payonce.WithJournal(journal.NewMemory()),
		payonce.WithLogger(slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	calls := 0
	u.mux.HandleFunc("GET "+PathWallets, func(w http.ResponseWriter, r *http.Request) {
		calls++
		writeJSON(w, 200, walletAnswer)
	})
	_, err := u.client.Wallets.Get(context.Background(), &WalletQuery{CustomerID: "cust_12345"}, payonce.WithReference("wallet-read"))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Zero(t, calls, "a read is never journaled: nothing sent")

	w, err := u.client.Wallets.Get(context.Background(), &WalletQuery{CustomerID: "cust_12345"})
	require.NoError(t, err)
	require.NotNil(t, w.Credentials, "read as a create's answer")
	assert.False(t, w.Meta.FromJournal)
	b, err := json.Marshal(w)
	require.NoError(t, err)
	for _, s := range []string{logged.String(), fmt.Sprintf("%+v", w), fmt.Sprintf("%#v", *w), string(b)} {
		assert.NotContains(t, s, "wallet-secret-s3cr3t-4711")
	}
}
