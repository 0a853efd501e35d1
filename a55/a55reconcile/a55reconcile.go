// Package a55reconcile is the A55 side of package reconcile: the charges
// A55 lists by wallet and date window, against the journal's
// charges.create entries. What it assumes of the list is in
// docs/journal.md ("Reconcile").
//
//	rep, err := reconcile.Run(ctx, a55reconcile.New(client, walletUUID), j, reconcile.Options{From: from, To: to})
//
// It reads only what any form of A55's charge list carries: Charges.All
// with a wallet and a date window, and a charge's UUID, status, creation
// time, amount, currency, wallet and (the payonce fake's extension) key.
package a55reconcile

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/reconcile"
)

// Operation is the journal operation that creates a charge.
const Operation = "charges.create"

// Provider is a reconcile.Provider over an A55 client's charges in some
// wallets.
type Provider struct {
	client  *a55.Client
	wallets []string
}

var _ reconcile.Provider = (*Provider)(nil)

// New returns the Provider of client's charges in wallets, under
// client's journal scope. With no wallet, the client's account's wallet
// (a55.Client.WithAccount) is listed: A55 lists one wallet at a time
// (list-charges requires wallet_uuid), and a client with no account is
// refused before anything is sent.
func New(client *a55.Client, wallets ...string) *Provider {
	return &Provider{client: client, wallets: wallets}
}

// Info names A55, the client's scope and charges.create.
func (p *Provider) Info() reconcile.Info {
	return reconcile.Info{Provider: "a55", Scope: p.client.Core().Scope(), Operation: Operation}
}

// List yields the charges each wallet's list holds created in [from,
// to] (date_start, date_end), a page of the most A55 allows at a time.
func (p *Provider) List(ctx context.Context, from, to time.Time) iter.Seq2[reconcile.Resource, error] {
	return func(yield func(reconcile.Resource, error) bool) {
		wallets := p.wallets
		if len(wallets) == 0 {
			wallets = []string{""}
		}
		for _, w := range wallets {
			opts := &a55.ChargeListOptions{WalletUUID: w, DateStart: from, DateEnd: to, Limit: a55.MaxChargeListLimit}
			for ch, err := range p.client.Charges.All(ctx, opts) {
				if err != nil {
					yield(reconcile.Resource{}, err)
					return
				}
				if !yield(resource(ch), nil) {
					return
				}
			}
		}
	}
}

// Recorded is the charge a charges.create entry's answer holds: a
// succeeded create's, or a declined one's (A55 answers the charge, in
// status error).
func (p *Provider) Recorded(e payonce.JournalEntry) (reconcile.Resource, bool) {
	if len(e.Result) == 0 {
		return reconcile.Resource{}, false
	}
	var ch a55.Charge
	if json.Unmarshal(e.Result, &ch) != nil || ch.UUID == "" {
		return reconcile.Resource{}, false
	}
	return resource(&ch), true
}

// Outcome reads a charge's status, in any case: error and declined are a
// failed create; pending and issued, one A55 has not decided (the payer
// or the acquirer has yet to answer); canceled, expired (unpaid) and
// chargeback_refunded, a create undone since with nothing left moved;
// every other status A55 documents is a create that succeeded, whatever
// followed (a refund may be partial, so refunded counts as moved);
// anything else is unknown.
func (p *Provider) Outcome(status string) reconcile.Outcome {
	switch strings.ToLower(strings.TrimSpace(status)) {
	case "error", "declined":
		return reconcile.OutcomeFailed
	case "pending", "issued":
		return reconcile.OutcomePending
	case "canceled", "expired", "chargeback_refunded":
		return reconcile.OutcomeReversed
	case "confirmed", "paid", "refunded", "refund_error", "chargeback", "chargeback_requested",
		"chargeback_reversed", "pre_chargeback_resolution", "pre_captured":
		return reconcile.OutcomeSucceeded
	}
	return reconcile.OutcomeUnknown
}

// resource is the reconcile form of a charge.
func resource(ch *a55.Charge) reconcile.Resource {
	return reconcile.Resource{ID: ch.UUID, Status: string(ch.Status), Amount: ch.Amount, Currency: ch.Currency,
		CreatedAt: ch.CreatedAt, Key: ch.IdempotencyKey, Account: ch.WalletUUID}
}
