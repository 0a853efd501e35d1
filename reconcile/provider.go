package reconcile

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/payonce/payonce"
)

// Provider is what Run needs of a provider: its records of the resources
// one operation makes (an A55 charge, a Coinepay card), and how to read
// the journal's record of that operation. Implementations:
// a55/a55reconcile and coinepay/coinepayreconcile.
type Provider interface {
	// Info names the provider, the journal scope its entries are recorded
	// under and the operation that makes a resource.
	Info() Info
	// List yields the provider's resources created in [from, to]. It may
	// yield others too (a list without a date filter yields everything):
	// Run keeps those whose creation time is in the span or unknown. It
	// stops at the first error, which it yields with a zero Resource.
	List(ctx context.Context, from, to time.Time) iter.Seq2[Resource, error]
	// Recorded is the resource the entry's stored answer (e.Result) names:
	// the provider's ID and the status the answer gave; ok is false when
	// it names none.
	Recorded(e payonce.JournalEntry) (r Resource, ok bool)
	// Outcome is what the provider's status says of the operation that
	// made the resource.
	Outcome(status string) Outcome
}

// Fetcher is a Provider that also reads one resource by its ID: Run asks
// it for the resource a succeeded entry holds when the list did not yield
// it, before it calls the resource missing. found is false when the
// provider answers that no such resource exists.
type Fetcher interface {
	Fetch(ctx context.Context, id string) (r Resource, found bool, err error)
}

// Info describes a Provider.
type Info struct {
	Provider  string // "a55", "coinepay"
	Scope     string // the journal scope of the provider's client (payonce.Client.Scope)
	Operation string // the journal operation that makes a resource: "charges.create", "cards.apply"
}

// Resource is one record of a provider's list.
type Resource struct {
	ID        string           // the provider's ID: a charge UUID, a card ID
	Status    string           // the provider's status, as it sent it
	Amount    payonce.Amount   // zero when the provider reports none
	Currency  payonce.Currency // "" when the provider reports none
	CreatedAt time.Time        // zero when the provider reports no time
	// Key is the Idempotency-Key of the request that made the resource,
	// when the provider reports it (only the payonce fakes do), "" otherwise.
	Key string
	// Order is what the provider reports that names the merchant's order
	// (as the order rule names it), "" when nothing does.
	Order string
	// Account is where the resource lives at the provider: an A55 wallet,
	// a Coinepay card's header and package.
	Account string
}

// Outcome is what a provider's status says of the operation that made a
// resource.
type Outcome string

// The outcomes.
const (
	// OutcomeSucceeded: the operation succeeded, whatever happened since
	// that may have left money moved (a charge confirmed, then refunded in
	// part or whole; a card issued, then frozen).
	OutcomeSucceeded Outcome = "succeeded"
	// OutcomeReversed: the operation succeeded and has been undone since,
	// nothing left moved (a charge canceled, or expired unpaid): it does
	// not count as one of two successful attempts of an order.
	OutcomeReversed Outcome = "reversed"
	// OutcomeFailed: the provider made the resource, but the operation
	// failed (a declined charge).
	OutcomeFailed Outcome = "failed"
	// OutcomePending: the provider has not decided yet (a charge waiting
	// for its payer or its acquirer); it may still succeed.
	OutcomePending Outcome = "pending"
	// OutcomeUnknown: a status the Provider does not know.
	OutcomeUnknown Outcome = "unknown"
)

// SameStatus reports whether two provider statuses are one, without
// regard to case or surrounding spaces.
func SameStatus(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}
