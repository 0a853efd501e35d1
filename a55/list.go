package a55

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// PathChargeList is the list endpoint (plural "charges"; the singular path
// reads one charge).
const PathChargeList = "/api/v1/bank/wallet/charges/"

// Page sizes of Charges.List: A55 accepts a limit of 1 to 100 charges a
// page; Charges.All asks for DefaultChargeListLimit when Limit is zero.
const (
	MaxChargeListLimit     = 100
	DefaultChargeListLimit = 20
)

// ChargeListOptions selects a page of charges: GET
// /api/v1/bank/wallet/charges/ with wallet_uuid, merchant_uuid, page,
// limit, sort, date_start, date_end and the filter= parameters
// (status:, type:, card_brand:, amount_gte:, amount_lte:), as A55's
// list-charges page documents them (amount_lte is assumed by symmetry
// with amount_gte, which the page shows). Every value is checked before
// anything is sent.
//
// IdempotencyKey and Description are extensions that only the payonce fake
// serves (A55 documents neither filter). The client also applies them to
// the answer itself, so a server that ignores them can never make another
// charge look like the one searched for: against A55, whose charges do not
// carry the key, a search by IdempotencyKey finds nothing, and a search by
// Description is a scan of the wallet's charges, filtered here.
type ChargeListOptions struct {
	// WalletUUID scopes the list to one wallet: required, the client's
	// Account's when empty.
	WalletUUID string
	// MerchantUUID keeps the charges of one merchant (merchant_uuid).
	MerchantUUID string
	// Page is the 1-based page number; zero leaves it to the server (1).
	Page int
	// Limit is the page size, 1 to MaxChargeListLimit. List refuses zero;
	// All uses DefaultChargeListLimit for it.
	Limit int
	// Sort orders the charges by creation: SortCreatedDesc or
	// SortCreatedAsc; "" leaves it to the server.
	Sort ChargeSort
	// Status keeps only charges in this status (filter=status:<Status>);
	// it must be one of Statuses(), in any case, and is sent as A55 spells it.
	Status Status
	// Type keeps only charges of this payment method (filter=type:<Type>).
	// The list page's example writes type:credit; any printable value
	// without spaces is sent as given.
	Type TypeCharge
	// CardBrand keeps only charges of this card brand
	// (filter=card_brand:<CardBrand>, such as Visa).
	CardBrand string
	// AmountGTE and AmountLTE keep only charges of at least and at most
	// this amount (filter=amount_gte:<n>, filter=amount_lte:<n>, written
	// as the shortest exact number); zero leaves a side open.
	AmountGTE, AmountLTE payonce.Amount
	// DateStart and DateEnd keep only charges created in [DateStart,
	// DateEnd] (date_start, date_end, RFC 3339); zero leaves a side open.
	DateStart, DateEnd time.Time
	// IdempotencyKey keeps only the charge created by the request that
	// carried this key (fake extension, see above).
	IdempotencyKey string
	// Description keeps only charges with exactly this description, where
	// a merchant can put its own order reference (fake extension).
	Description string
}

// ChargeSort is the order of a charge list.
type ChargeSort string

// The orders of A55's list-charges page.
const (
	SortCreatedDesc ChargeSort = "created:desc"
	SortCreatedAsc  ChargeSort = "created:asc"
)

func (o *ChargeListOptions) validate() error {
	if err := checkID("wallet_uuid", o.WalletUUID, false); err != nil {
		return err
	}
	if o.MerchantUUID != "" {
		if err := checkID("merchant_uuid", o.MerchantUUID, false); err != nil {
			return err
		}
	}
	switch {
	case o.Page < 0:
		return invalid("page", "must not be negative")
	case o.Limit < 1 || o.Limit > MaxChargeListLimit:
		return invalid("limit", "must be within 1.."+strconv.Itoa(MaxChargeListLimit))
	case o.Sort != "" && o.Sort != SortCreatedDesc && o.Sort != SortCreatedAsc:
		return invalid("sort", "want created:desc or created:asc")
	case o.Status != "" && !o.Status.Known():
		return invalid("filter", "unknown status "+strconv.Quote(string(o.Status)))
	case !o.AmountGTE.IsZero() && !o.AmountLTE.IsZero() && o.AmountLTE.Cmp(o.AmountGTE) < 0:
		return invalid("filter", "amount_lte below amount_gte")
	case !o.DateStart.IsZero() && !o.DateEnd.IsZero() && o.DateEnd.Before(o.DateStart):
		return invalid("date_end", "before date_start")
	}
	if o.Type != "" {
		if err := checkID("filter", string(o.Type), false); err != nil {
			return invalid("filter", "type: must be printable, without spaces")
		}
	}
	if o.CardBrand != "" {
		if err := checkID("filter", o.CardBrand, false); err != nil {
			return invalid("filter", "card_brand: must be printable, without spaces")
		}
	}
	for _, v := range []struct{ field, v string }{{"idempotency_key", o.IdempotencyKey}, {"description", o.Description}} {
		if err := checkText(v.field, v.v, false, maxText); err != nil {
			return err
		}
	}
	return nil
}

func (o *ChargeListOptions) query() url.Values {
	q := url.Values{"wallet_uuid": {o.WalletUUID}, "limit": {strconv.Itoa(o.Limit)}}
	if o.MerchantUUID != "" {
		q.Set("merchant_uuid", o.MerchantUUID)
	}
	if o.Page > 0 {
		q.Set("page", strconv.Itoa(o.Page))
	}
	if o.Sort != "" {
		q.Set("sort", string(o.Sort))
	}
	if o.Status != "" {
		q.Add("filter", "status:"+string(o.Status.canonical()))
	}
	if o.Type != "" {
		q.Add("filter", "type:"+string(o.Type))
	}
	if o.CardBrand != "" {
		q.Add("filter", "card_brand:"+o.CardBrand)
	}
	if !o.AmountGTE.IsZero() {
		q.Add("filter", "amount_gte:"+string(appendExact(nil, o.AmountGTE)))
	}
	if !o.AmountLTE.IsZero() {
		q.Add("filter", "amount_lte:"+string(appendExact(nil, o.AmountLTE)))
	}
	if !o.DateStart.IsZero() {
		q.Set("date_start", o.DateStart.UTC().Format(time.RFC3339))
	}
	if !o.DateEnd.IsZero() {
		q.Set("date_end", o.DateEnd.UTC().Format(time.RFC3339))
	}
	if o.IdempotencyKey != "" {
		q.Set("idempotency_key", o.IdempotencyKey)
	}
	if o.Description != "" {
		q.Set("description", o.Description)
	}
	return q
}

// keep reports whether c passes the filters the client applies itself.
func (o *ChargeListOptions) keep(c *Charge) bool {
	return (o.IdempotencyKey == "" || c.IdempotencyKey == o.IdempotencyKey) &&
		(o.Description == "" || c.Description == o.Description) &&
		(o.Status == "" || c.Status.Is(o.Status.canonical()))
}

// ChargePage is one page of Charges.List.
type ChargePage struct {
	Charges    []*Charge
	Page       int // the page number answered
	Limit      int // the page size applied
	Total      int // charges in all pages, when the server reports it (else -1)
	TotalPages int // pages in all, when the server reports it (else -1)
	// Meta describes the call that returned the page.
	Meta ResponseMeta
	// served is how many charges the server put in the page, before the
	// client's own filters; firstUUID is the first of them.
	served    int
	firstUUID string
}

// HasMore reports whether a later page may hold more charges: from the
// reported page count or total when there is one, else whether the server
// filled this page.
func (p *ChargePage) HasMore() bool {
	switch {
	case p.served == 0:
		return false
	case p.TotalPages >= 0:
		return p.Page < p.TotalPages
	case p.Total >= 0 && p.Limit > 0:
		return p.Page*p.Limit < p.Total
	}
	return p.Limit > 0 && p.served >= p.Limit
}

// chargeList reads a list answer: a bare array, or an object holding the
// charges under data, items, charges or results, with page, limit (or
// page_size, per_page), total (or total_items, count) and total_pages.
type chargeList struct {
	charges                        []*Charge
	page, limit, total, totalPages int
}

// UnmarshalJSON implements json.Unmarshaler.
func (l *chargeList) UnmarshalJSON(b []byte) error {
	l.total, l.totalPages = -1, -1
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &l.charges)
	}
	var raw struct {
		Data       []*Charge `json:"data"`
		Items      []*Charge `json:"items"`
		Charges    []*Charge `json:"charges"`
		Results    []*Charge `json:"results"`
		Page       int       `json:"page"`
		Limit      int       `json:"limit"`
		PageSize   int       `json:"page_size"`
		PerPage    int       `json:"per_page"`
		Total      *int      `json:"total"`
		TotalItems *int      `json:"total_items"`
		Count      *int      `json:"count"`
		TotalPages *int      `json:"total_pages"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, list := range [][]*Charge{raw.Data, raw.Items, raw.Charges, raw.Results} {
		if list != nil {
			l.charges = list
			break
		}
	}
	l.page = raw.Page
	l.limit = firstPositive(raw.Limit, raw.PageSize, raw.PerPage)
	for _, t := range []*int{raw.Total, raw.TotalItems, raw.Count} {
		if t != nil && *t >= 0 {
			l.total = *t
			break
		}
	}
	if raw.TotalPages != nil && *raw.TotalPages >= 0 {
		l.totalPages = *raw.TotalPages
	}
	return nil
}

func firstPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// List reads one page of charges: GET /api/v1/bank/wallet/charges/. opts
// may be nil: the first page of DefaultChargeListLimit charges of the
// client's Account's wallet. It sends no Idempotency-Key and, like every
// read, is retried freely. A bad option (no wallet, a limit outside
// 1..100, zero included, a negative page, an unknown status or sort, an
// end before the start) is refused before anything is sent with
// payonce.ErrInvalidRequest. A55 does not document the answer's shape:
// the client reads {"charges":[…],"page":n,"limit":n,"total":n}, a bare
// array, and the usual other envelopes (data, items, results).
//
// It is how a merchant settles a charge whose answer was lost without
// sending the card again: list the wallet's charges (by IdempotencyKey on
// the fake, by Description or date range against A55) instead of keeping
// the card and CVV to resend them (docs/a55.md).
func (s *ChargesService) List(ctx context.Context, opts *ChargeListOptions, callOpts ...payonce.CallOption) (*ChargePage, error) {
	o := ChargeListOptions{Limit: DefaultChargeListLimit}
	if opts != nil {
		o = *opts
	}
	o.WalletUUID = s.c.walletOr(o.WalletUUID)
	opts = &o
	l := chargeList{total: -1, totalPages: -1} // an empty body reports neither
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: "charges.list", Method: http.MethodGet, Path: PathChargeList, Route: PathChargeList,
		Query: opts.query(), Validate: opts.validate,
	}, &l, callOpts)
	if err != nil {
		return nil, err
	}
	p := &ChargePage{Charges: make([]*Charge, 0, len(l.charges)), Page: l.page, Limit: l.limit,
		Total: l.total, TotalPages: l.totalPages, Meta: meta, served: len(l.charges)}
	for _, c := range l.charges {
		if c != nil && p.firstUUID == "" {
			p.firstUUID = c.UUID
		}
		if c != nil && opts.keep(c) {
			p.Charges = append(p.Charges, c)
		}
	}
	if p.Page < 1 {
		p.Page = max(opts.Page, 1)
	}
	if p.Limit < 1 {
		p.Limit = opts.Limit
	}
	return p, nil
}

// All iterates over every charge the options select (nil: every charge),
// page by page from opts.Page (1 when zero) with opts.Limit
// (DefaultChargeListLimit when zero); other options are checked as List
// checks them, and opts itself is left unchanged. It stops at the first
// error, which it yields with a nil charge; breaking out of the loop stops
// the paging.
//
//	for ch, err := range client.Charges.All(ctx, &a55.ChargeListOptions{WalletUUID: w}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(ch.UUID, ch.Status)
//	}
func (s *ChargesService) All(ctx context.Context, opts *ChargeListOptions, callOpts ...payonce.CallOption) iter.Seq2[*Charge, error] {
	return func(yield func(*Charge, error) bool) {
		var o ChargeListOptions
		if opts != nil {
			o = *opts
		}
		for page, err := range s.pages(ctx, o, callOpts...) {
			if err != nil {
				yield(nil, err)
				return
			}
			for _, c := range page.Charges {
				if !yield(c, nil) {
					return
				}
			}
		}
	}
}

// pages yields the pages o selects, from o.Page (1 when zero) with
// o.Limit (DefaultChargeListLimit when zero), stopping at the first
// error, after the last page, or when a server answers the same page
// again.
func (s *ChargesService) pages(ctx context.Context, o ChargeListOptions, callOpts ...payonce.CallOption) iter.Seq2[*ChargePage, error] {
	return func(yield func(*ChargePage, error) bool) {
		if o.Page == 0 {
			o.Page = 1
		}
		if o.Limit == 0 {
			o.Limit = DefaultChargeListLimit
		}
		prevFirst := ""
		for {
			page, err := s.List(ctx, &o, callOpts...)
			if err != nil {
				yield(nil, err)
				return
			}
			// A server that ignores page would answer the same page
			// forever; ending here as if the list were complete would hide
			// the charges past the page (a lookup would find none of them,
			// a reconcile would report on part of the list).
			if page.firstUUID != "" && page.firstUUID == prevFirst {
				yield(nil, &payonce.APIError{Provider: "a55", Operation: "charges.list", Method: http.MethodGet, Path: PathChargeList,
					StatusCode: page.Meta.StatusCode, RequestID: page.Meta.RequestID, Attempts: page.Meta.Attempts, Kind: payonce.ErrMalformedResponse,
					Err: fmt.Errorf("page %d starts with charge %s, as the page before it did: the list cannot be read to its end", o.Page, prevFirst)})
				return
			}
			prevFirst = page.firstUUID
			if !yield(page, nil) || !page.HasMore() || page.Page < o.Page {
				return
			}
			o.Page = page.Page + 1
		}
	}
}

// chargePageFields is ChargePage without its printing methods.
type chargePageFields ChargePage

// Format prints the page as Charge.Format prints a charge: every text the
// server sent redacted, under every verb.
func (p ChargePage) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, chargePageFields(p), "a55.ChargePage")
}

// LogValue is the slog form: the page's charges and counts, texts
// redacted.
func (p ChargePage) LogValue() slog.Value { return redactprint.LogValue(chargePageFields(p)) }
