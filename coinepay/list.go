package coinepay

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/payonce/payonce"
)

// DefaultPageSize is the page size Cards.All asks for when ListOptions
// leaves it zero.
const DefaultPageSize = 50

// ListOptions selects a page of card/list. Zero values are left out of the
// query, so the server applies its defaults (page 1); a nil *ListOptions
// is the same as a zero one.
type ListOptions struct {
	Page     int // 1-based page number
	PageSize int // cards per page
}

func (o *ListOptions) validate() error {
	if o == nil {
		return nil
	}
	if o.Page < 0 {
		return &payonce.ValidationError{Field: "page", Reason: "must not be negative", Err: payonce.ErrInvalidRequest}
	}
	if o.PageSize < 0 {
		return &payonce.ValidationError{Field: "page_size", Reason: "must not be negative", Err: payonce.ErrInvalidRequest}
	}
	return nil
}

// copy returns a copy of o the caller's value cannot change (a zero one
// for nil).
func (o *ListOptions) copy() *ListOptions {
	if o == nil {
		return &ListOptions{}
	}
	c := *o
	return &c
}

func (o *ListOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	if o.Page > 0 {
		q.Set("page", strconv.Itoa(o.Page))
	}
	if o.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(o.PageSize))
	}
	return q
}

// CardPage is one page of card/list with the metadata of its call in
// Meta.
type CardPage struct {
	Cards    []Card
	Page     int // the page number the server answered
	PageSize int // the page size the server applied
	Total    int // cards in all pages, when the server reports it (else -1)
	// Meta describes the call: attempts, status, request ID, headers.
	Meta payonce.Meta
}

// HasMore reports whether a later page may hold more cards: when the
// server reports a total, whether it lies beyond this page; otherwise
// whether this page was full.
func (p *CardPage) HasMore() bool {
	if len(p.Cards) == 0 {
		return false
	}
	if p.Total >= 0 && p.Page > 0 && p.PageSize > 0 {
		return p.Page*p.PageSize < p.Total
	}
	return p.PageSize > 0 && len(p.Cards) >= p.PageSize
}

// NextPage returns the options of the page after this one.
func (p *CardPage) NextPage() *ListOptions {
	page := p.Page
	if page < 1 {
		page = 1
	}
	return &ListOptions{Page: page + 1, PageSize: p.PageSize}
}

// listData is the data object of card/list.
type listData struct {
	Items    []Card `json:"items"`
	Total    *int   `json:"total"`
	Page     int    `json:"page"`
	PageSize int    `json:"page_size"`
}

// List reads one page of the API key's cards (opts may be nil: the
// server's first page). It sends no Idempotency-Key.
func (s *CardsService) List(ctx context.Context, opts *ListOptions, callOpts ...payonce.CallOption) (*CardPage, error) {
	var d listData
	var raw json.RawMessage
	meta, err := s.client.core.Do(ctx, &payonce.Request{
		Operation: "cards.list",
		Method:    http.MethodGet,
		Path:      PathCardList,
		Route:     PathCardList,
		Query:     opts.query(),
		Validate:  opts.validate,
	}, &raw, callOpts...)
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, &payonce.APIError{Provider: ProviderName, Operation: "cards.list", Method: http.MethodGet,
				Path: PathCardList, StatusCode: meta.StatusCode, RequestID: meta.RequestID, Attempts: meta.Attempts,
				Kind: payonce.ErrMalformedResponse, Err: err}
		}
	}
	if d.Items == nil {
		d.Items = []Card{}
	}
	p := &CardPage{Cards: d.Items, Page: d.Page, PageSize: d.PageSize, Total: -1, Meta: meta}
	if d.Total != nil {
		p.Total = *d.Total
	}
	if p.Page == 0 {
		p.Page = 1
		if opts != nil {
			p.Page = max(opts.Page, 1)
		}
	}
	if p.PageSize == 0 && opts != nil {
		p.PageSize = opts.PageSize
	}
	return p, nil
}

// All iterates over every card, page by page, starting at opts.Page (1
// when zero or opts is nil) with opts.PageSize (DefaultPageSize when zero).
// It stops at the first error, which it yields with a nil card. A page
// that starts with the card the page before it started with (a server
// that ignores the page parameter, or a list that moved by a whole page
// between two reads) cannot be read past: All ends with an
// ErrMalformedResponse error then, never as if the list were complete.
// Breaking out of the loop stops the paging.
//
//	for card, err := range client.Cards.All(ctx, nil) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(card.CardID)
//	}
func (s *CardsService) All(ctx context.Context, opts *ListOptions, callOpts ...payonce.CallOption) iter.Seq2[*Card, error] {
	return func(yield func(*Card, error) bool) {
		opts := opts.copy()
		if opts.Page < 1 {
			opts.Page = 1
		}
		if opts.PageSize < 1 {
			opts.PageSize = DefaultPageSize
		}
		prevFirst := ""
		for {
			page, err := s.List(ctx, opts, callOpts...)
			if err != nil {
				yield(nil, err)
				return
			}
			// A server that ignores the page parameter would loop forever;
			// ending here as if the list were complete would hide the
			// cards past the page (a lookup would find none of them).
			if len(page.Cards) > 0 && prevFirst != "" && page.Cards[0].CardID == prevFirst {
				yield(nil, &payonce.APIError{Provider: ProviderName, Operation: "cards.list", Method: http.MethodGet, Path: PathCardList,
					StatusCode: page.Meta.StatusCode, RequestID: page.Meta.RequestID, Attempts: page.Meta.Attempts, Kind: payonce.ErrMalformedResponse,
					Err: fmt.Errorf("page %d starts with card %s, as the page before it did: the list cannot be read to its end", opts.Page, prevFirst)})
				return
			}
			if len(page.Cards) > 0 {
				prevFirst = page.Cards[0].CardID
			}
			for i := range page.Cards {
				if !yield(&page.Cards[i], nil) {
					return
				}
			}
			if !page.HasMore() {
				return
			}
			opts = page.NextPage()
		}
	}
}
