package a55test_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/logtest"
)

func chargeReq(t *testing.T) *a55.ChargeCreateRequest {
	t.Helper()
	amount, err := payonce.ParseAmount("100.00")
	require.NoError(t, err)
	return &a55.ChargeCreateRequest{Amount: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}}
}

// The recipe "advance 25 h and resume" of docs/testing.md: the test client reads the
// fake's clock, so its key-age guard sees the 25 hours too and refuses to
// send a key the server has forgotten (which would charge a second time).
func TestClientKeyAgesWithTheFakeClock(t *testing.T) {
	srv := a55test.New(t)
	client, err := srv.Client()
	require.NoError(t, err)
	// Every answer is lost after the charge commits: the operation fails
	// with its key, and the customer has paid once.
	require.NoError(t, srv.AddFault(a55test.Rule{Fault: a55test.FaultDropAfterCommit, Path: a55test.ChargePath}))
	key, err := payonce.NewKey(srv.Clock().Now(), "order", "4242", "payment")
	require.NoError(t, err)
	_, err = client.Charges.Create(context.Background(), chargeReq(t), payonce.WithKey(key))
	require.Error(t, err)
	require.True(t, payonce.IsTemporary(err))
	require.Equal(t, 1, srv.Ledger().Count(key.ID()))
	srv.ClearFaults()

	srv.Clock().Advance(25 * time.Hour)
	sent := len(srv.Requests())
	_, err = client.Charges.Create(context.Background(), chargeReq(t), payonce.WithKey(payonce.KeyOf(err)))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	assert.Equal(t, key, payonce.KeyOf(err))
	assert.Len(t, srv.Requests(), sent, "nothing sent")
	assert.Equal(t, 1, srv.Ledger().Count(key.ID()), "charged once")
}

// The test client retries on millisecond waits by default: a 429 asking for
// a second is retried after FastRetryPolicy's 20 ms cap; the caller's
// policy still wins. The wait is read from the client's debug record of
// the retry, so nothing depends on the machine's speed.
func TestClientRetriesFastByDefault(t *testing.T) {
	wait := func(t *testing.T, opts ...payonce.Option) time.Duration {
		srv := a55test.New(t)
		log, logger := logtest.New()
		client, err := srv.Client(append([]payonce.Option{payonce.WithLogger(logger)}, opts...)...)
		require.NoError(t, err)
		require.NoError(t, srv.AddFault(a55test.Rule{Fault: a55test.FaultRateLimit, Path: a55test.ChargePath, RetryAfter: 1, Count: 1}))
		ch, err := client.Charges.Create(context.Background(), chargeReq(t))
		require.NoError(t, err)
		require.Equal(t, 2, ch.Meta.Attempts)
		waits := log.RetryWaits(t)
		require.Len(t, waits, 1, "one retry logged")
		return waits[0]
	}
	assert.Equal(t, 20*time.Millisecond, wait(t), "Retry-After capped by FastRetryPolicy")
	assert.Equal(t, time.Second, wait(t, payonce.WithRetryPolicy(payonce.DefaultRetryPolicy())), "the caller's policy wins")
}

// What a test uses is the test package's own API, so go doc shows it: no
// type of a55test or coinepaytest is an alias of the engine's.
func TestTypesAreTheirOwn(t *testing.T) {
	requireOwnTypes(t, ".", "Rule", "FaultKind", "Ledger", "Operation", "Attempt", "Stats", "Clock")
	requireOwnTypes(t, "../../coinepay/coinepaytest", "Rule", "FaultKind", "Ledger", "Operation", "Attempt", "Stats", "Clock", "Package")
}

func requireOwnTypes(t *testing.T, dir string, names ...string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	specs := map[string]*ast.TypeSpec{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					specs[ts.Name.Name] = ts
				}
			}
		}
	}
	for _, n := range names {
		ts, ok := specs[n]
		require.True(t, ok, "type %s is not declared in %s", n, dir)
		assert.False(t, ts.Assign.IsValid(), "type %s is an alias", n)
	}
}

// Fakes created with default settings draw their IDs at random: the first
// charge of two servers never has the same UUID. WithSeed makes a run
// reproducible.
func TestServersDrawDistinctIDsUnlessSeeded(t *testing.T) {
	first := func(opts ...a55test.Option) string {
		srv := a55test.New(t, opts...)
		client, err := srv.Client()
		require.NoError(t, err)
		ch, err := client.Charges.Create(t.Context(), chargeReq(t))
		require.NoError(t, err)
		return ch.UUID
	}
	assert.NotEqual(t, first(), first(), "default fakes share their first charge UUID")
	assert.Equal(t, first(a55test.WithSeed(11)), first(a55test.WithSeed(11)))
}
