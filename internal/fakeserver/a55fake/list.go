package a55fake

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/fakeserver"
)

// List limits of GET /api/v1/bank/wallet/charges/.
const (
	defaultListLimit = 20
	maxListLimit     = 100
)

// knownStatuses are the statuses filter=status: accepts.
var knownStatuses = map[string]bool{
	"confirmed": true, "pending": true, "issued": true, "canceled": true, "paid": true, "error": true,
	"refunded": true, "refund_error": true, "chargeback_requested": true, "chargeback_refunded": true,
	"chargeback_reversed": true, "pre_chargeback_resolution": true,
}

// listQuery is a parsed list request.
type listQuery struct {
	wallet, status, typ, key, description string
	start, end                            time.Time
	page, limit                           int
}

func (q *listQuery) match(c *charge) bool {
	return (q.wallet == "" || c.WalletUUID == q.wallet) &&
		(q.status == "" || c.Status == q.status) &&
		(q.typ == "" || c.TypeCharge == q.typ) &&
		(q.key == "" || c.IdempotencyKey == q.key) &&
		(q.description == "" || c.Description == q.description) &&
		(q.start.IsZero() || !c.CreatedAt.Before(q.start)) &&
		(q.end.IsZero() || !c.CreatedAt.After(q.end))
}

// parseListDate reads an RFC 3339 time or a YYYY-MM-DD date; a date as the
// end of a range means the end of that day.
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

// parseListQuery reads the query of a list request, or answers 400.
func (f *Fake) parseListQuery(r *fakeserver.Request) (*listQuery, *fakeserver.Response) {
	v := r.HTTP.URL.Query()
	q := &listQuery{wallet: v.Get("wallet_uuid"), key: v.Get("idempotency_key"), description: v.Get("description"),
		page: 1, limit: defaultListLimit}
	bad := func(field, reason string) (*listQuery, *fakeserver.Response) {
		resp := f.validation(field, reason)
		return nil, &resp
	}
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return bad("page", "want a page number from 1")
		}
		q.page = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxListLimit {
			return bad("limit", "want 1 to 100")
		}
		q.limit = n
	}
	for _, fl := range v["filter"] {
		for _, part := range strings.Split(fl, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(part), ":")
			switch {
			case !ok || val == "":
				return bad("filter", "want name:value")
			case name == "status" && knownStatuses[val]:
				q.status = val
			case name == "status":
				return bad("filter", "unknown status")
			case name == "type" && typeCharges[val]:
				q.typ = val
			case name == "type":
				return bad("filter", "unknown type")
			default:
				return bad("filter", "the fake filters on status and type only")
			}
		}
	}
	var ok bool
	if s := v.Get("date_start"); s != "" {
		if q.start, ok = parseListDate(s, false); !ok {
			return bad("date_start", "want ISO 8601")
		}
	}
	if s := v.Get("date_end"); s != "" {
		if q.end, ok = parseListDate(s, true); !ok {
			return bad("date_end", "want ISO 8601")
		}
	}
	return q, nil
}

// listCharges serves GET /api/v1/bank/wallet/charges/: the client's
// charges, oldest first, filtered and paged. Besides A55's wallet_uuid,
// page, limit, date_start, date_end and filter=status:..|type:.., the fake
// also filters on idempotency_key and description (extensions).
func (f *Fake) listCharges(r *fakeserver.Request) fakeserver.Response {
	q, bad := f.parseListQuery(r)
	if bad != nil {
		return *bad
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.wallet != "" {
		if w, ok := f.wallets[q.wallet]; !ok || w.client != r.Credential {
			return f.generalError(http.StatusNotFound, "NOT_FOUND", "wallet not found", []Detail{{Field: "wallet_uuid", Reason: "unknown wallet"}})
		}
	}
	skip := len(f.chargeOrder) + 1 // a page past the end, without overflowing
	if q.page-1 <= len(f.chargeOrder)/q.limit {
		skip = (q.page - 1) * q.limit
	}
	data := make([]*charge, 0, q.limit)
	total := 0
	for _, c := range f.chargeOrder {
		if c.client != r.Credential || !q.match(c) {
			continue
		}
		if total >= skip && len(data) < q.limit {
			data = append(data, c)
		}
		total++
	}
	return fakeserver.JSON(http.StatusOK, map[string]any{
		"data": data, "page": q.page, "limit": q.limit, "total": total,
		"total_pages": (total + q.limit - 1) / q.limit,
	})
}
