package coinepayfake

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// card is an issued card and its JSON view.
type card struct {
	CardID    string             `json:"card_id"`
	HeaderID  string             `json:"header_id"`
	PackageID string             `json:"package_id"`
	Status    string             `json:"status"`
	Currency  string             `json:"currency"`
	Balance   fakeserver.Decimal `json:"balance"`
	CreatedAt time.Time          `json:"created_at"`
	// IdempotencyKey is the key of the apply that issued the card: an
	// extension of the fake (Coinepay documents no such field), so that a
	// settle lookup can tell identical applies apart.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	apiKey         string
}

func (f *Fake) invalid(msg string) fakeserver.Response {
	return Envelope(http.StatusBadRequest, KeyInvalidRequest, msg, nil)
}

func (f *Fake) decodeErr(err error) fakeserver.Response {
	if errors.Is(err, fakeserver.ErrInvalidDecimal) {
		return f.invalid("金额格式错误，应为两位小数的字符串，例如 \"100.00\"")
	}
	return f.Problem(fakeserver.ProblemMalformedJSON, 0, "")
}

func insufficient(balance fakeserver.Decimal) fakeserver.Response {
	return Envelope(http.StatusBadRequest, KeyInsufficientBalance, "余额不足", map[string]any{"balance": balance})
}

func (f *Fake) feeFor(headerID, packageID string) (fakeserver.Decimal, bool) {
	if len(f.cfg.Catalog) == 0 {
		return f.fee, true
	}
	for _, p := range f.cfg.Catalog {
		if p.HeaderID == headerID && p.PackageID == packageID {
			return p.Fee, true
		}
	}
	return fakeserver.Decimal{}, false
}

func (f *Fake) apply(r *fakeserver.Request) fakeserver.Response {
	var in applyRequest
	if err := r.Decode(&in, false); err != nil {
		return f.decodeErr(err)
	}
	if in.HeaderID == "" || in.PackageID == "" {
		return f.invalid("header_id 和 package_id 不能为空")
	}
	fee, found := f.feeFor(in.HeaderID, in.PackageID)
	if !found {
		return Envelope(http.StatusBadRequest, KeyPackageNotFound, "卡头或套餐不存在", nil)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	bal := f.balances[r.Credential]
	rest, err := bal.Sub(fee)
	if err != nil {
		return insufficient(bal)
	}
	c := &card{CardID: f.e.NewID("card_"), HeaderID: in.HeaderID, PackageID: in.PackageID, Status: "active",
		Currency: "USD", CreatedAt: f.e.Clock().Now().UTC(), IdempotencyKey: r.Key, apiKey: r.Credential}
	f.balances[r.Credential] = rest
	f.cards[c.CardID] = c
	f.order[r.Credential] = append(f.order[r.Credential], c.CardID)
	f.all = append(f.all, c.CardID)
	f.evictLocked()
	f.e.Record(fakeserver.Operation{Provider: Provider, Kind: "card.apply", IdempotencyKey: r.Key, ID: c.CardID,
		Credential: r.Credential, Amount: fee.String()})
	return ok(map[string]any{
		"card_id": c.CardID, "header_id": c.HeaderID, "package_id": c.PackageID, "status": c.Status,
		"currency": c.Currency, "balance": c.Balance, "fee": fee, "account_balance": rest, "created_at": c.CreatedAt,
	})
}

func (f *Fake) notFound() fakeserver.Response {
	return Envelope(http.StatusNotFound, KeyNotFound, "卡片不存在", nil)
}

func (f *Fake) recharge(r *fakeserver.Request) fakeserver.Response {
	var in rechargeRequest
	if err := r.Decode(&in, false); err != nil {
		return f.decodeErr(err)
	}
	if in.CardID == "" || in.Amount == nil || in.Amount.IsZero() {
		return f.invalid("card_id 不能为空，amount 必须大于 0")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, found := f.cards[in.CardID]
	if !found || c.apiKey != r.Credential {
		return f.notFound()
	}
	bal := f.balances[r.Credential]
	rest, err := bal.Sub(*in.Amount)
	if err != nil {
		return insufficient(bal)
	}
	cardBalance, err := c.Balance.Add(*in.Amount)
	if err != nil {
		return f.invalid("充值后卡片余额超出上限")
	}
	f.balances[r.Credential] = rest
	c.Balance = cardBalance
	id := f.e.NewID("rch_")
	f.e.Record(fakeserver.Operation{Provider: Provider, Kind: "card.recharge", IdempotencyKey: r.Key, ID: c.CardID,
		Credential: r.Credential, Amount: in.Amount.String()})
	return ok(map[string]any{
		"recharge_id": id, "card_id": c.CardID, "amount": *in.Amount, "card_balance": c.Balance, "account_balance": rest,
	})
}

func (f *Fake) info(r *fakeserver.Request) fakeserver.Response {
	id := r.HTTP.URL.Query().Get(queryCardID)
	if id == "" {
		return f.invalid("card_id 不能为空")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, found := f.cards[id]
	if !found || c.apiKey != r.Credential {
		return f.notFound()
	}
	return ok(c)
}

func (f *Fake) list(r *fakeserver.Request) fakeserver.Response {
	q := r.HTTP.URL.Query()
	page, pageSize := 1, 20
	if s := q.Get(queryPage); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000000 {
			return f.invalid("page 必须是正整数")
		}
		page = n
	}
	if s := q.Get(queryPageSize); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			return f.invalid("page_size 必须在 1 到 100 之间")
		}
		pageSize = n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := f.order[r.Credential]
	items := []*card{}
	for i := (page - 1) * pageSize; i < len(ids) && i < page*pageSize; i++ {
		items = append(items, f.cards[ids[i]])
	}
	return ok(map[string]any{"items": items, "page": page, "page_size": pageSize, "total": len(ids)})
}
