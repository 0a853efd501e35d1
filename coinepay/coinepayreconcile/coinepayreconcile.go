// Package coinepayreconcile is the Coinepay side of package reconcile:
// the cards card/list reports, against the journal's cards.apply
// entries. What it assumes of card/list, which Coinepay does not
// document, is in docs/journal.md ("Reconcile").
//
//	rep, err := reconcile.Run(ctx, coinepayreconcile.New(client), j, reconcile.Options{From: from, To: to, Secrets: client.Core()})
package coinepayreconcile

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/reconcile"
)

// Operation is the journal operation that issues a card.
const Operation = "cards.apply"

// pageSize is the page size the list is read with (card/list takes 1 to
// 100).
const pageSize = 100

// Provider is a reconcile.Provider and reconcile.Fetcher over a Coinepay
// client's cards.
type Provider struct {
	client *coinepay.Client
}

var (
	_ reconcile.Provider = (*Provider)(nil)
	_ reconcile.Fetcher  = (*Provider)(nil)
)

// New returns the Provider of client's cards, under client's journal
// scope.
func New(client *coinepay.Client) *Provider { return &Provider{client: client} }

// Info names Coinepay, the client's scope and cards.apply.
func (p *Provider) Info() reconcile.Info {
	return reconcile.Info{Provider: coinepay.ProviderName, Scope: p.client.Core().Scope(), Operation: Operation}
}

// List yields every card of the API key: card/list has no date filter,
// so the whole list is read and reconcile.Run keeps the span's cards.
func (p *Provider) List(ctx context.Context, from, to time.Time) iter.Seq2[reconcile.Resource, error] {
	return func(yield func(reconcile.Resource, error) bool) {
		for c, err := range p.client.Cards.All(ctx, &coinepay.ListOptions{PageSize: pageSize}) {
			if err != nil {
				yield(reconcile.Resource{}, err)
				return
			}
			if !yield(resource(c), nil) {
				return
			}
		}
	}
}

// Fetch reads one card (card/info); found is false when Coinepay answers
// that it does not exist.
func (p *Provider) Fetch(ctx context.Context, id string) (reconcile.Resource, bool, error) {
	c, err := p.client.Cards.Info(ctx, id)
	switch {
	case errors.Is(err, payonce.ErrNotFound):
		return reconcile.Resource{}, false, nil
	case err != nil:
		return reconcile.Resource{}, false, err
	}
	return resource(&c.Card), true, nil
}

// Recorded is the card a cards.apply entry's answer holds: the envelope's
// data, as card/apply answers it and a settle records it.
func (p *Provider) Recorded(e payonce.JournalEntry) (reconcile.Resource, bool) {
	if len(e.Result) == 0 {
		return reconcile.Resource{}, false
	}
	var env struct {
		Data *coinepay.Card `json:"data"`
	}
	if json.Unmarshal(e.Result, &env) != nil || env.Data == nil || env.Data.CardID == "" {
		return reconcile.Resource{}, false
	}
	return resource(env.Data), true
}

// Outcome reads a card's status: a listed card was issued, so the apply
// succeeded whatever became of the card since (active, frozen, closed),
// unless its status says the issue failed (failed, rejected, error, in
// any case). Coinepay documents no card statuses: this is the
// assumption docs/journal.md states.
func (p *Provider) Outcome(status string) reconcile.Outcome {
	if coinepay.CardFailed(status) {
		return reconcile.OutcomeFailed
	}
	return reconcile.OutcomeSucceeded
}

// resource is the reconcile form of a card: no amount (a card's balance
// is not what its apply cost), its header and package as its account,
// and the key of the apply that issued it where the server reports one
// (the payonce fake does; Coinepay does not).
func resource(c *coinepay.Card) reconcile.Resource {
	r := reconcile.Resource{ID: c.CardID, Status: c.Status, Currency: payonce.Currency(c.Currency),
		CreatedAt: c.CreatedAt, Key: c.IdempotencyKey}
	if c.HeaderID != "" || c.PackageID != "" {
		r.Account = c.HeaderID + "/" + c.PackageID
	}
	return r
}
