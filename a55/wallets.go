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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// Wallet is an A55 wallet; wallets hold charges. Its ID is read from
// wallet_uuid (create-wallet page) or uuid (quickstart page).
type Wallet struct {
	UUID         string           `json:"wallet_uuid"`
	EntityUUID   string           `json:"entity_uuid,omitempty"`
	MerchantUUID string           `json:"merchant_uuid,omitempty"`
	CustomerID   string           `json:"customer_id,omitempty"`
	Name         string           `json:"name,omitempty"`
	Email        string           `json:"email,omitempty"`
	Currency     payonce.Currency `json:"currency,omitempty"`
	Status       string           `json:"status,omitempty"`
	CreatedAt    time.Time        `json:"created_at,omitzero"`

	// Credentials is the wallet's own OAuth client, which A55 hands out
	// once, in the answer to a create with CreateCredentials: read it from
	// the live answer and store it where secrets go. It is never printed,
	// logged, put in a span or in the journal, and never marshalled.
	Credentials *WalletCredentials `json:"-"`
	// CredentialsWithheld reports an answer that had credentials which
	// this Wallet does not carry: one answered from the journal (or a
	// server's replay the journal stored), where they were never kept.
	CredentialsWithheld bool `json:"-"`

	// Meta describes the call that returned the wallet.
	Meta ResponseMeta `json:"-"`
}

// WalletCredentials is a wallet's OAuth client: the client_id and
// client_secret of a55.ClientCredentials for an Auth acting for the
// wallet. Every printed form, its slog form and its JSON form hide the
// secret; read the fields themselves on purpose.
type WalletCredentials struct {
	ClientID     string
	ClientSecret string
}

// String hides the secret.
func (c WalletCredentials) String() string {
	return "a55.WalletCredentials{ClientID: " + c.ClientID + ", ClientSecret: [REDACTED]}"
}

// Format hides the secret under every verb.
func (c WalletCredentials) Format(f fmt.State, verb rune) {
	s := c.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// LogValue hides the secret in slog records.
func (c WalletCredentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON hides the secret.
func (c WalletCredentials) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"client_id": c.ClientID, "client_secret": "[REDACTED]"})
}

// walletWire is a wallet answer's wire form: both spellings of the ID and
// the credentials as sent.
type walletWire struct {
	walletFields
	UUID        string          `json:"uuid"`
	Credentials json.RawMessage `json:"credentials"`
	CreatedAt   answerTime      `json:"created_at"`
}

// UnmarshalJSON reads a wallet answer: the ID from wallet_uuid or uuid,
// and the credentials object when the answer holds one whole; a
// credentials member the journal stored without them (null, or a
// redacted text) sets CredentialsWithheld.
func (w *Wallet) UnmarshalJSON(b []byte) error {
	var v walletWire
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = Wallet(v.walletFields)
	w.CreatedAt = time.Time(v.CreatedAt)
	if w.UUID == "" {
		w.UUID = v.UUID
	}
	w.Credentials, w.CredentialsWithheld = nil, false
	if raw := bytes.TrimSpace(v.Credentials); len(raw) > 0 {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if raw[0] == '{' && json.Unmarshal(raw, &c) == nil && c.ClientSecret != "" && c.ClientSecret != "[REDACTED]" {
			w.Credentials = &WalletCredentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret}
		} else {
			w.CredentialsWithheld = true
		}
	}
	return nil
}

// WalletsService creates wallets
// (https://docs.a55.tech/docs/api-reference/wallet/create-wallet) and
// reads one
// (https://docs.a55.tech/zh-CN/docs/api-reference/wallet/get-wallet).
type WalletsService struct{ c *Client }

// WalletCreateRequest is the body of POST /api/v1/bank/wallet/, as A55's
// create-wallet page takes it: every field but MerchantUUID required;
// create_credentials is always sent.
type WalletCreateRequest struct {
	EntityUUID string           `json:"entity_uuid"` // the account entity (your company)
	CustomerID string           `json:"customer_id"` // your own customer ID
	Currency   payonce.Currency `json:"currency"`    // BRL, MXN, CLP or ARS
	Name       string           `json:"name"`
	Email      string           `json:"email"`
	// CreateCredentials asks A55 for the wallet's own OAuth client
	// (Wallet.Credentials, in the live answer only).
	CreateCredentials bool `json:"create_credentials"`
	// MerchantUUID is an existing merchant; empty, A55 creates one (the
	// client's Account is not used here).
	MerchantUUID string `json:"merchant_uuid,omitempty"`
}

// walletCurrencies are the currencies of the create-wallet page.
var walletCurrencies = []payonce.Currency{payonce.BRL, payonce.MXN, payonce.CLP, payonce.ARS}

func (r *WalletCreateRequest) validate() error {
	if r == nil {
		return errNilRequest
	}
	if err := checkRequiredID("entity_uuid", r.EntityUUID, false); err != nil {
		return err
	}
	if err := checkRequiredID("customer_id", r.CustomerID, false); err != nil {
		return err
	}
	known := false
	for _, c := range walletCurrencies {
		known = known || r.Currency == c
	}
	switch {
	case r.Currency == "":
		return invalid("currency", "required")
	case !known:
		return invalid("currency", "want BRL, MXN, CLP or ARS")
	}
	if err := checkText("name", r.Name, true, maxText); err != nil {
		return err
	}
	if err := checkEmail("email", r.Email); err != nil {
		return err
	}
	if r.MerchantUUID != "" {
		return checkID("merchant_uuid", r.MerchantUUID, false)
	}
	return nil
}

// Create creates a wallet: POST /api/v1/bank/wallet/, one operation under
// one Idempotency-Key (payonce.WithReference with a journal, payonce.WithKey,
// else a new UUID v4), however many attempts it takes. With
// CreateCredentials the live answer carries Wallet.Credentials; answered
// from the journal it does not (CredentialsWithheld), since the journal
// never stores them.
func (s *WalletsService) Create(ctx context.Context, req *WalletCreateRequest, opts ...payonce.CallOption) (*Wallet, error) {
	w := new(Wallet)
	var body any
	if req != nil {
		body = req
	}
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: "wallets.create", Method: http.MethodPost, Path: PathWallets, Route: PathWallets,
		Body: body, Keyed: true, Validate: req.validate,
	}, w, opts)
	if err != nil {
		return nil, err
	}
	w.Meta = meta
	if meta.FromJournal && req.CreateCredentials && w.Credentials == nil {
		w.CredentialsWithheld = true
	}
	return w, nil
}

// WalletQuery is the query of GET /api/v1/bank/wallet/, as A55's
// get-wallet page takes it: at least one of WalletUUID, Email and
// CustomerID (each one given must name the same wallet), and Currency,
// which tells a customer's wallets in several currencies apart. Empty
// fields are not sent; the client's Account is not used here.
type WalletQuery struct {
	WalletUUID string           // wallet_uuid
	Email      string           // email
	CustomerID string           // customer_id
	Currency   payonce.Currency // currency: BRL, MXN, CLP or ARS
}

func (q *WalletQuery) validate() error {
	switch {
	case q == nil:
		return errNilRequest
	case q.WalletUUID == "" && q.Email == "" && q.CustomerID == "":
		return invalid("wallet_uuid", "one of wallet_uuid, email or customer_id is required")
	}
	if q.WalletUUID != "" {
		if err := checkID("wallet_uuid", q.WalletUUID, false); err != nil {
			return err
		}
	}
	if q.Email != "" {
		if err := checkEmail("email", q.Email); err != nil {
			return err
		}
	}
	if q.CustomerID != "" {
		if err := checkID("customer_id", q.CustomerID, false); err != nil {
			return err
		}
	}
	if q.Currency != "" && !slices.Contains(walletCurrencies, q.Currency) {
		return invalid("currency", "want BRL, MXN, CLP or ARS")
	}
	return nil
}

// values is the query string: the fields set.
func (q *WalletQuery) values() url.Values {
	v := url.Values{}
	if q == nil {
		return v
	}
	for name, s := range map[string]string{"wallet_uuid": q.WalletUUID, "email": q.Email, "customer_id": q.CustomerID,
		"currency": string(q.Currency)} {
		if s != "" {
			v.Set(name, s)
		}
	}
	return v
}

// Get reads the one wallet q names: GET /api/v1/bank/wallet/ with the
// query's wallet_uuid, email, customer_id and currency, checked before
// anything is sent. The answer is read as a create's (its ID from
// wallet_uuid or uuid; credentials, should an answer hold them, in the
// live Wallet only): a read is never journaled (payonce.WithReference is
// refused), so nothing of it is kept. An answer naming another wallet,
// e-mail, customer or currency than q gave is a malformed answer
// (payonce.ErrMalformedResponse), never taken for the wallet asked for.
// A GET carries no key and is retried freely.
func (s *WalletsService) Get(ctx context.Context, q *WalletQuery, opts ...payonce.CallOption) (*Wallet, error) {
	out := &queriedWallet{q: q}
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: "wallets.get", Method: http.MethodGet, Path: PathWallets, Route: PathWallets, Query: q.values(),
		Validate: q.validate,
	}, out, opts)
	if err != nil {
		return nil, err
	}
	w := &out.Wallet
	w.Meta = meta
	return w, nil
}

// queriedWallet reads a wallet answer and holds it to the query that
// asked for it.
type queriedWallet struct {
	Wallet
	q *WalletQuery
}

// Refusals of a wallet answer; they name no value the server sent.
var (
	errNoWalletUUID     = errors.New("wallet answer without wallet_uuid")
	errWalletNotQueried = errors.New("wallet answer does not match the query")
)

// UnmarshalJSON reads the answer as Wallet does, then requires each
// field the query gave to be the answer's where the answer reports it
// (the e-mail without regard to case).
func (w *queriedWallet) UnmarshalJSON(b []byte) error {
	if err := w.Wallet.UnmarshalJSON(b); err != nil {
		return err
	}
	if w.UUID == "" {
		return errNoWalletUUID
	}
	q, got := w.q, &w.Wallet
	if q == nil {
		return nil
	}
	differs := func(want, have string, fold bool) bool {
		return want != "" && have != "" && want != have && !(fold && strings.EqualFold(want, have))
	}
	if differs(q.WalletUUID, got.UUID, false) || differs(q.Email, got.Email, true) ||
		differs(q.CustomerID, got.CustomerID, false) || differs(string(q.Currency), string(got.Currency), false) {
		return errWalletNotQueried
	}
	return nil
}

// walletFields is Wallet without its methods.
type walletFields Wallet

// Format prints the wallet as Charge.Format prints a charge: every text
// the server sent redacted, under every verb, and the credentials as an
// address.
func (w Wallet) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, walletFields(w), "a55.Wallet")
}

// LogValue is the slog form, texts redacted, the credentials' secret
// hidden.
func (w Wallet) LogValue() slog.Value { return redactprint.LogValue(walletFields(w)) }
