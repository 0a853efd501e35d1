package a55fake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// wallet is a wallet of a client.
type wallet struct {
	UUID, EntityUUID, MerchantUUID, CustomerID string
	Name, Email, Currency, Status              string
	CreatedAt                                  time.Time
	client                                     string
	quickstart                                 bool // created with the quickstart's {"name"} body
}

// Account is what a client of the fake starts with: its entity, its
// merchant and a wallet of that merchant, as A55 hands them out with the
// sandbox credentials. They stay the same across Reset.
type Account struct {
	ClientID     string `json:"client_id"`
	EntityUUID   string `json:"entity_uuid"`
	MerchantUUID string `json:"merchant_id"` // what a charge's merchant_id names
	WalletUUID   string `json:"wallet_uuid"`
}

// walletCredentials are the OAuth credentials a wallet created with
// create_credentials true got; the token endpoint takes them for the
// client that created the wallet.
type walletCredentials struct {
	secret string
	owner  string
}

// newAccounts makes each client's account, in client order so that a
// seeded engine gives the same IDs.
func (f *Fake) newAccounts() {
	ids := make([]string, 0, len(f.cfg.Clients))
	for id := range f.cfg.Clients {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	f.accounts = make(map[string]Account, len(ids))
	for _, id := range ids {
		f.accounts[id] = Account{ClientID: id, EntityUUID: f.e.NewUUID(), MerchantUUID: f.e.NewUUID(), WalletUUID: f.e.NewUUID()}
	}
}

// installAccountsLocked puts each client's wallet back (after New and
// every Reset).
func (f *Fake) installAccountsLocked(now time.Time) {
	for id, a := range f.accounts {
		f.wallets[a.WalletUUID] = &wallet{UUID: a.WalletUUID, EntityUUID: a.EntityUUID, MerchantUUID: a.MerchantUUID,
			CustomerID: "default", Name: "default", Currency: "BRL", Status: "active", CreatedAt: now, client: id}
		f.merchants[a.MerchantUUID] = id
	}
}

// Accounts returns every client's account, by client id order.
func (f *Fake) Accounts() []Account {
	out := make([]Account, 0, len(f.accounts))
	for _, a := range f.accounts {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Account) int {
		switch {
		case a.ClientID < b.ClientID:
			return -1
		case a.ClientID > b.ClientID:
			return 1
		}
		return 0
	})
	return out
}

// AccountOf returns the account of a client.
func (f *Fake) AccountOf(clientID string) (Account, bool) {
	a, ok := f.accounts[clientID]
	return a, ok
}

// walletForCreateLocked finds the wallet a charge goes to: the one it
// names, which must be the client's (404 unknown, 403 another client's)
// and the merchant_id's (422); with none named (the guide's body), the
// client's own wallet.
func (f *Fake) walletForCreateLocked(client string, s *spec) (*wallet, *fakeserver.Response) {
	if s.walletUUID == "" {
		w := f.wallets[f.accounts[client].WalletUUID]
		if w == nil { // a client the fake was not configured with (IssueToken)
			return nil, f.refuse(http.StatusNotFound, codeNotFound, "wallet not found", "wallet_uuid", "this client has no wallet")
		}
		return w, nil
	}
	w, ok := f.wallets[s.walletUUID]
	switch {
	case !ok:
		return nil, f.refuse(http.StatusNotFound, codeNotFound, "wallet not found", "wallet_uuid", "no such wallet")
	case w.client != client:
		return nil, f.refuse(http.StatusForbidden, codeForbidden, "the wallet belongs to another client", "wallet_uuid", "not a wallet of this client")
	case s.merchantID != "" && s.merchantID != w.MerchantUUID:
		return nil, f.refuse(http.StatusUnprocessableEntity, codeValidation, "the request breaks the API reference's rules",
			"merchant_id", "not the merchant of wallet_uuid")
	}
	return w, nil
}

// refuse is a general error with one detail.
func (f *Fake) refuse(status int, code, msg, field, reason string) *fakeserver.Response {
	resp := f.generalError(status, code, msg, []Detail{{Field: field, Reason: reason}})
	return &resp
}

// createWallet serves POST /api/v1/bank/wallet/: the create-wallet
// reference's body, or the quickstart's {"name": ...} alone, answered in
// the quickstart's shape (the id as uuid, "wal_...").
func (f *Fake) createWallet(r *fakeserver.Request) fakeserver.Response {
	obj, bad := f.parseBody(r.Body, false)
	if bad != nil {
		return *bad
	}
	now := f.e.Clock().Now().UTC()
	if _, named := obj["name"]; named && len(obj) == 1 {
		var c checks
		c.walk("", obj, []field{{name: "name", kind: kString, required: true}}, false)
		if !c.ok() {
			return c.answer(f)
		}
		a := f.accounts[r.Credential]
		w := &wallet{UUID: "wal_" + f.e.NewUUID(), EntityUUID: a.EntityUUID, MerchantUUID: a.MerchantUUID, Name: obj.str("name"),
			Currency: "BRL", Status: "active", CreatedAt: now, client: r.Credential, quickstart: true}
		return f.commitWallet(r, w, nil)
	}
	var c checks
	c.walk("", obj, createWalletFields, false)
	if e := obj.str("email"); e != "" {
		c.checkEmail("email", e)
	}
	if !c.ok() {
		return c.answer(f)
	}
	w := &wallet{UUID: f.e.NewUUID(), EntityUUID: obj.str("entity_uuid"), MerchantUUID: obj.str("merchant_uuid"),
		CustomerID: obj.str("customer_id"), Name: obj.str("name"), Email: obj.str("email"), Currency: obj.str("currency"),
		Status: "active", CreatedAt: now, client: r.Credential}
	var creds *walletCredentials
	var credID string
	if on, _ := obj.boolean("create_credentials"); on {
		credID = f.e.NewID("cli_")
		creds = &walletCredentials{secret: f.e.NewID("sec_"), owner: r.Credential}
	}
	f.mu.Lock()
	if w.MerchantUUID != "" {
		if owner, ok := f.merchants[w.MerchantUUID]; !ok || owner != r.Credential {
			f.mu.Unlock()
			return *f.refuse(http.StatusNotFound, codeNotFound, "merchant not found", "merchant_uuid", "no such merchant of this client")
		}
	} else {
		w.MerchantUUID = f.e.NewUUID() // "omit to auto-create"
		f.merchants[w.MerchantUUID] = r.Credential
	}
	f.mu.Unlock()
	if creds != nil {
		f.tokMu.Lock()
		f.walletCreds[credID] = *creds
		f.tokMu.Unlock()
		return f.commitWallet(r, w, map[string]string{"client_id": credID, "client_secret": creds.secret})
	}
	return f.commitWallet(r, w, nil)
}

// commitWallet stores w, records it and answers it.
func (f *Fake) commitWallet(r *fakeserver.Request, w *wallet, creds map[string]string) fakeserver.Response {
	f.mu.Lock()
	f.addWalletLocked(w)
	f.mu.Unlock()
	f.e.Record(fakeserver.Operation{Provider: Provider, Kind: "wallet.create", IdempotencyKey: r.Key, ID: w.UUID, Credential: r.Credential})
	if w.quickstart {
		return fakeserver.JSON(http.StatusOK, map[string]any{"uuid": w.UUID, "name": w.Name, "status": w.Status,
			"created_at": w.CreatedAt.Format(time.RFC3339Nano)})
	}
	out := walletAnswer(w)
	if creds != nil {
		out["credentials"] = creds
	}
	return answerJSON(out)
}

// walletAnswer is a wallet in the create-wallet reference's shape,
// without credentials.
func walletAnswer(w *wallet) map[string]any {
	return map[string]any{
		"wallet_uuid": w.UUID, "entity_uuid": w.EntityUUID, "merchant_uuid": w.MerchantUUID, "customer_id": w.CustomerID,
		"name": w.Name, "email": w.Email, "currency": w.Currency, "status": w.Status, "created_at": w.CreatedAt.Format(time.RFC3339Nano),
	}
}

// answerJSON is a 200 answer of out.
func answerJSON(out map[string]any) fakeserver.Response {
	b, err := json.Marshal(out)
	if err != nil {
		return fakeserver.JSON(http.StatusInternalServerError, map[string]string{"error": "encode"})
	}
	return fakeserver.Response{Status: http.StatusOK, Body: b}
}

// walletQueryParams are the query parameters of the get-wallet page:
// wallet_uuid, email or customer_id (at least one of them), and
// currency.
var walletQueryParams = []string{"wallet_uuid", "email", "customer_id", "currency"}

// getWallet serves GET /api/v1/bank/wallet/ (the get-wallet page): the
// one wallet of the client that wallet_uuid, email and customer_id name,
// each given one agreeing, narrowed by currency; in create-wallet's
// shape, never with credentials (A55 hands them out once, in the create's
// answer). A query naming none of the three is 422 naming them; a wallet
// of another client 403; none 404; a query several wallets match is 422
// naming what it gave: the fake never picks one of them.
func (f *Fake) getWallet(r *fakeserver.Request) fakeserver.Response {
	q := r.HTTP.URL.Query()
	id, email, customer, currency := q.Get("wallet_uuid"), q.Get("email"), q.Get("customer_id"), q.Get("currency")
	var c checks
	c.unknownParams(q, walletQueryParams)
	if id == "" && email == "" && customer == "" {
		for _, name := range walletQueryParams[:3] {
			c.rule(name, "one of wallet_uuid, email or customer_id is required")
		}
	}
	c.checkID("wallet_uuid", id)
	c.checkID("customer_id", customer)
	if email != "" {
		c.checkEmail("email", email)
	}
	if currency != "" && !slices.Contains(walletCurrencies, currency) {
		c.ruleCode("currency", "want one of "+strings.Join(walletCurrencies, ", "), codeCurrency)
	}
	if !c.ok() {
		return c.answer(f)
	}
	match := func(w *wallet) bool {
		return (id == "" || w.UUID == id) && (email == "" || w.Email == email) &&
			(customer == "" || w.CustomerID == customer) && (currency == "" || w.Currency == currency)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != "" {
		w, ok := f.wallets[id]
		switch {
		case !ok:
			return *f.refuse(http.StatusNotFound, codeNotFound, "wallet not found", "wallet_uuid", "no such wallet")
		case w.client != r.Credential:
			return *f.refuse(http.StatusForbidden, codeForbidden, "the wallet belongs to another client", "wallet_uuid", "not a wallet of this client")
		case !match(w):
			return *f.refuse(http.StatusNotFound, codeNotFound, "wallet not found", "wallet_uuid", "the wallet does not match the query")
		}
		return answerJSON(walletAnswer(w))
	}
	var found []*wallet
	for _, w := range f.wallets {
		if w.client == r.Credential && match(w) {
			found = append(found, w)
		}
	}
	switch len(found) {
	case 0:
		return *f.refuse(http.StatusNotFound, codeNotFound, "wallet not found", firstGiven(q), "no wallet of this client matches")
	case 1:
		return answerJSON(walletAnswer(found[0]))
	}
	c.rule(firstGiven(q), strconv.Itoa(len(found))+" wallets match: name wallet_uuid, or narrow by currency")
	return c.answer(f)
}

// firstGiven names the first of email and customer_id the query gives.
func firstGiven(q url.Values) string {
	if q.Get("email") != "" {
		return "email"
	}
	return "customer_id"
}
