package payoncetest

import (
	"context"
	"fmt"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Operation is one business operation a fake executed and committed: an
// A55 wallet or charge created, a charge captured, refunded or canceled, a
// Coinepay card issued or recharged. Replays, conflicts and errors add
// none. It never holds a card number, CVV, secret or token.
type Operation struct {
	Provider       string    `json:"provider"`             // "a55" or "coinepay"
	Kind           string    `json:"kind"`                 // "wallet.create", "charge.create", "charge.capture", "charge.refund", "charge.cancel", "card.apply", "card.recharge"
	IdempotencyKey string    `json:"idempotency_key"`      // the key it ran under ("" when none was sent)
	ID             string    `json:"id"`                   // the resource: wallet_uuid, charge_uuid, card_id or recharge_id
	Credential     string    `json:"credential,omitempty"` // the A55 client_id or Coinepay API key that sent it
	Amount         string    `json:"amount,omitempty"`     // the amount, when the operation has one
	Time           time.Time `json:"time"`                 // when it committed, on the fake's clock

	// Status is the resource's status the operation left, as the fake
	// kept it then (an A55 charge: "confirmed", "pending" while the
	// acquirer has not answered, "error" awaiting a 3DS challenge,
	// "pre_captured", "refund_error", ...); "" for a Coinepay card.
	Status string `json:"status,omitempty"`
	// Code is the code of an answer that was not the resource although
	// the operation ran (A55: "TIMEOUT", "3DS_REQUIRED"). Such an answer
	// is not stored under the key: the same key sent again runs again, and
	// shows here as a second operation, the double charge a client must
	// avoid. "" for a plain answer.
	Code string `json:"code,omitempty"`
}

func operations(in []fakeserver.Operation) []Operation {
	out := make([]Operation, len(in))
	for i, op := range in {
		out[i] = Operation{Provider: op.Provider, Kind: op.Kind, IdempotencyKey: op.IdempotencyKey, ID: op.ID,
			Credential: op.Credential, Amount: op.Amount, Time: op.Time, Status: op.Status, Code: op.Code}
	}
	return out
}

// Ledger is a fake's list of executed operations, in commit order: what
// really ran on the server, whatever the client was told. Safe for
// concurrent use; every method reads the live ledger.
type Ledger struct {
	l *fakeserver.Ledger
}

// Operations returns every executed operation, oldest first.
func (l *Ledger) Operations() []Operation { return operations(l.l.Operations()) }

// ByKey returns the operations executed under an idempotency key.
func (l *Ledger) ByKey(key string) []Operation { return operations(l.l.ByKey(key)) }

// Count returns how many operations ran under an idempotency key.
func (l *Ledger) Count(key string) int { return l.l.Count(key) }

// ExecutedOnce reports whether exactly one operation ran under key: the
// "charged exactly once" assertion.
func (l *Ledger) ExecutedOnce(key string) bool { return l.l.ExecutedOnce(key) }

// CountKind returns how many operations of a kind ran ("charge.create").
func (l *Ledger) CountKind(kind string) int { return l.l.CountKind(kind) }

// WaitCount waits until at least n operations ran under key, or ctx ends
// (its error is returned): a test that must act once the server committed
// (give up on a held answer, kill a worker) waits on the commit itself,
// never on a timer or a poll. An operation recorded while it waits
// counts even if a Reset empties the ledger before it returns.
func (l *Ledger) WaitCount(ctx context.Context, key string, n int) error {
	return l.l.WaitCount(ctx, key, n)
}

// Len returns how many operations ran in all.
func (l *Ledger) Len() int { return l.l.Len() }

// String says how many operations the ledger holds, so that %v and %+v
// print the ledger, not an address.
func (l *Ledger) String() string {
	n := l.l.Len()
	if n == 1 {
		return "payoncetest.Ledger{1 operation}"
	}
	return fmt.Sprintf("payoncetest.Ledger{%d operations}", n)
}

// Attempt is one request a fake received, whatever became of it. The
// signature fields are Coinepay's; an A55 attempt leaves them empty.
type Attempt struct {
	Time             time.Time `json:"time"`     // when it arrived, on the fake's clock
	Provider         string    `json:"provider"` // "a55" or "coinepay"
	Method           string    `json:"method"`
	Path             string    `json:"path"`
	IdempotencyKey   string    `json:"idempotency_key,omitempty"`   // "" when none was sent
	Credential       string    `json:"credential,omitempty"`        // the client_id of the A55 bearer token, the Coinepay X-Api-Key
	Nonce            string    `json:"nonce,omitempty"`             // the X-Nonce sent
	Timestamp        string    `json:"timestamp,omitempty"`         // the X-Timestamp sent
	SignatureChecked bool      `json:"signature_checked,omitempty"` // the fake checked the signature (false for a request refused before)
	SignatureValid   bool      `json:"signature_valid,omitempty"`   // the signature checked out; meaningful when SignatureChecked
	Replayed         bool      `json:"replayed"`                    // answered from the store or a shared in-flight result
	Conflict         bool      `json:"conflict,omitempty"`          // 409 for a key reused with another payload
	Executed         bool      `json:"executed"`                    // the operation ran on this request
	Fault            FaultKind `json:"fault,omitempty"`             // the fault injected, "" for none
	Status           int       `json:"status"`                      // the HTTP status answered, 0 when none was sent
	// Answer is the provider answer the fake injected instead of the
	// operation's own (a55test.Answer: TIMEOUT, DUPLICATE_REQUEST, ...,
	// pre_captured, refund_error), "" for none.
	Answer string `json:"answer,omitempty"`
}

func attempts(in []fakeserver.Attempt) []Attempt {
	out := make([]Attempt, len(in))
	for i, a := range in {
		checked, valid := a.SignatureValid != nil, a.SignatureValid != nil && *a.SignatureValid
		out[i] = Attempt{Time: a.Time, Provider: a.Provider, Method: a.Method, Path: a.Path, IdempotencyKey: a.IdempotencyKey,
			Credential: a.Credential, Nonce: a.Nonce, Timestamp: a.Timestamp, SignatureChecked: checked, SignatureValid: valid,
			Replayed: a.Replayed, Conflict: a.Conflict, Executed: a.Executed, Fault: FaultKind(a.Fault), Status: a.Status,
			Answer: a.Answer}
	}
	return out
}

// Stats are a fake's running totals since it started or was Reset.
type Stats struct {
	Requests  int `json:"requests"`  // requests received
	Executed  int `json:"executed"`  // operations run
	Replayed  int `json:"replayed"`  // answers copied from the store or a shared in-flight result
	Conflicts int `json:"conflicts"` // 409s for a key reused with another payload
	Faults    int `json:"faults"`    // faults injected
}

func stats(s fakeserver.Stats) Stats {
	return Stats{Requests: s.Requests, Executed: s.Executed, Replayed: s.Replayed, Conflicts: s.Conflicts, Faults: s.Faults}
}
