package a55fake

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// List limits of GET /api/v1/bank/wallet/charges/.
const (
	defaultListLimit = 20
	maxListLimit     = 100
)

// knownStatuses are the statuses filter=status: takes.
var knownStatuses = map[string]bool{
	StatusIssued: true, StatusPending: true, StatusConfirmed: true, StatusPreCaptured: true, StatusPaid: true,
	StatusCanceled: true, StatusError: true, StatusDeclined: true, StatusExpired: true, StatusRefunded: true,
	StatusRefundError: true, StatusChargebackRequested: true, StatusChargebackReversed: true, StatusChargebackRefunded: true,
	StatusPreChargebackResolution: true, StatusChargeback: true,
}

// listTypes are the values filter=type: takes: each type_charge, and the
// list page's short "credit" and "debit".
var listTypes = map[string]string{
	typeCredit: typeCredit, typeDebit: typeDebit, typePix: typePix, typeBoleto: typeBoleto,
	typeApplePay: typeApplePay, typeGooglePay: typeGooglePay, "credit": typeCredit, "debit": typeDebit,
}

// listQuery is a parsed list request.
type listQuery struct {
	wallet, merchant, key, description string
	statuses, types, brands            []string
	gte, lte                           *decimal
	start, end                         time.Time
	page, limit                        int
	newestFirst                        bool
}

func (q *listQuery) match(c *charge) bool {
	in := func(list []string, v string, fold bool) bool {
		for _, x := range list {
			if x == v || fold && strings.EqualFold(x, v) {
				return true
			}
		}
		return len(list) == 0
	}
	amount := c.Amount
	return c.WalletUUID == q.wallet &&
		(q.merchant == "" || c.MerchantID == q.merchant) &&
		in(q.statuses, c.Status, false) && in(q.types, c.TypeCharge, false) && in(q.brands, c.CardBrand, true) &&
		(q.gte == nil || !amount.less(*q.gte)) && (q.lte == nil || !q.lte.less(amount)) &&
		(q.key == "" || c.IdempotencyKey == q.key) &&
		(q.description == "" || c.Description == q.description) &&
		(q.start.IsZero() || !c.CreatedAt.Before(q.start)) &&
		(q.end.IsZero() || !c.CreatedAt.After(q.end))
}

// parseListDate reads an ISO 8601 date (2026-03-01) or time
// (2026-03-01T00:00:00Z); a date as the end of a range means the end of
// that day.
func parseListDate(s string, end bool) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, false
	}
	if end {
		d = d.Add(24*time.Hour - time.Nanosecond)
	}
	return d, true
}

// listParams are the query parameters of the list: the list-charges
// page's and the fake's own idempotency_key and description.
var listParams = []string{"wallet_uuid", "merchant_uuid", "date_start", "date_end", "page", "limit", "filter", "sort",
	"idempotency_key", "description"}

// getParams are the query parameters of Get's query form.
var getParams = []string{"charge_uuid", "wallet_uuid"}

// QueryParams returns the query parameters the fake takes, by endpoint
// name as testdata/a55/reference.json names them.
func QueryParams() map[string][]string {
	return map[string][]string{"list_charges": slices.Clone(listParams), "get_charge": slices.Clone(getParams),
		"get_wallet": slices.Clone(walletQueryParams)}
}

// unknownParams refuses parameters the endpoint does not take.
func (c *checks) unknownParams(q url.Values, known []string) {
	var names []string
	for k := range q {
		if !slices.Contains(known, k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		c.rule(memberName(k), "not a parameter of this endpoint in A55's API reference")
	}
}

// parseListQuery reads the query of a list request (list-charges page):
// wallet_uuid (required), merchant_uuid, date_start, date_end, page,
// limit, sort (created:desc, created:asc) and repeated filter= values
// status:, type:, card_brand:, amount_gte:, amount_lte: (a filter may
// also list several, comma-separated); the fake's own idempotency_key
// and description.
func (f *Fake) parseListQuery(r *fakeserver.Request) (*listQuery, *fakeserver.Response) {
	v := r.HTTP.URL.Query()
	q := &listQuery{wallet: v.Get("wallet_uuid"), merchant: v.Get("merchant_uuid"), key: v.Get("idempotency_key"),
		description: v.Get("description"), page: 1, limit: defaultListLimit}
	var c checks
	c.unknownParams(v, listParams)
	if q.wallet == "" {
		c.rule("wallet_uuid", "required")
	}
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			c.rule("page", "want a page number from 1")
		}
		q.page = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxListLimit {
			c.rule("limit", "want 1 to 100")
		}
		q.limit = n
	}
	switch v.Get("sort") {
	case "", "created:asc":
	case "created:desc":
		q.newestFirst = true
	default:
		c.rule("sort", "want created:desc or created:asc")
	}
	for _, fl := range v["filter"] {
		for _, part := range strings.Split(fl, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(part), ":")
			switch {
			case !ok || val == "":
				c.rule("filter", "want name:value, such as status:confirmed")
			case name == "status" && knownStatuses[val]:
				q.statuses = append(q.statuses, val)
			case name == "status":
				c.rule("filter", "unknown status "+strconv.Quote(val))
			case name == "type" && listTypes[val] != "":
				q.types = append(q.types, listTypes[val])
			case name == "type":
				c.rule("filter", "unknown type "+strconv.Quote(val))
			case name == "card_brand":
				q.brands = append(q.brands, val)
			case name == "amount_gte" || name == "amount_lte":
				d, err := parseDecimal(val, 2)
				if err != nil {
					c.ruleCode("filter", name+": "+err.Error(), codeAmountInvalid)
					continue
				}
				if name == "amount_gte" {
					q.gte = &d
				} else {
					q.lte = &d
				}
			default:
				c.rule("filter", "want status:, type:, card_brand:, amount_gte: or amount_lte:")
			}
		}
	}
	var ok bool
	if s := v.Get("date_start"); s != "" {
		if q.start, ok = parseListDate(s, false); !ok {
			c.rule("date_start", "want ISO 8601: 2026-03-01 or 2026-03-01T00:00:00Z")
		}
	}
	if s := v.Get("date_end"); s != "" {
		if q.end, ok = parseListDate(s, true); !ok {
			c.rule("date_end", "want ISO 8601: 2026-03-01 or 2026-03-01T00:00:00Z")
		}
	}
	if !c.ok() {
		resp := c.answer(f)
		return nil, &resp
	}
	return q, nil
}

// listCharges serves GET /api/v1/bank/wallet/charges/: the wallet's
// charges, oldest first (sort=created:desc: newest first), filtered and
// paged, as {"charges":[...],"page":n,"limit":n,"total":n}.
func (f *Fake) listCharges(r *fakeserver.Request) fakeserver.Response {
	q, bad := f.parseListQuery(r)
	if bad != nil {
		return *bad
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.wallets[q.wallet]
	switch {
	case !ok:
		return *f.refuse(http.StatusNotFound, codeNotFound, "wallet not found", "wallet_uuid", "no such wallet")
	case w.client != r.Credential:
		return *f.refuse(http.StatusForbidden, codeForbidden, "the wallet belongs to another client", "wallet_uuid", "not a wallet of this client")
	}
	skip := len(f.chargeOrder) + 1 // a page past the end, without overflowing
	if q.page-1 <= len(f.chargeOrder)/q.limit {
		skip = (q.page - 1) * q.limit
	}
	var page []*charge
	total := 0
	n := len(f.chargeOrder)
	for i := range n {
		c := f.chargeOrder[i]
		if q.newestFirst {
			c = f.chargeOrder[n-1-i]
		}
		if c.client != r.Credential || !q.match(c) {
			continue
		}
		if total >= skip && len(page) < q.limit {
			page = append(page, c)
		}
		total++
	}
	b := []byte(`{"charges":[`)
	for i, c := range page {
		if i > 0 {
			b = append(b, ',')
		}
		v := f.view(c)
		b = v.appendJSON(b)
	}
	b = append(b, `],"page":`...)
	b = strconv.AppendInt(b, int64(q.page), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(q.limit), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	return fakeserver.Response{Status: http.StatusOK, Body: append(b, '}')}
}
