package a55_test

import (
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scopeCharge() *a55.ChargeCreateRequest {
	return chargeOf("25.00", a55test.CardConfirms)
}

// Two merchants authenticate with fixed access tokens and share one
// journal: nothing in a token identifies the merchant, so such a client
// refuses a journal without an explicit scope, and with one scope per
// merchant, merchant B's "order-1/charge" is charged, not answered from
// merchant A's entry.
func TestAccessTokenClientsOnOneJournalNeverShareEntries(t *testing.T) {
	srv := a55test.New(t, a55test.WithExtraCredentials("merchant-b", "secret-b"))
	j := journal.NewMemory()
	opts := func(extra ...payonce.Option) []payonce.Option {
		return append([]payonce.Option{payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(fastPolicy()), payonce.WithJournal(j)}, extra...)
	}
	tokA, tokB := srv.IssueToken(), srv.IssueTokenFor("merchant-b")

	_, err := a55.NewClient(a55.AccessToken(tokA), opts()...)
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "an access token names no merchant: a journal needs WithScope")
	assert.Contains(t, err.Error(), "WithScope")
	assert.NotContains(t, err.Error(), tokA)

	a, err := a55.NewClient(a55.AccessToken(tokA), opts(payonce.WithScope("shop-a/sandbox"))...)
	require.NoError(t, err)
	a = a.WithAccount(srv.Account())
	b, err := a55.NewClient(a55.AccessToken(tokB), opts(payonce.WithScope("shop-b/sandbox"))...)
	require.NoError(t, err)
	walletB, merchantB, ok := srv.AccountOf("merchant-b")
	require.True(t, ok)
	b = b.WithAccount(a55.Account{MerchantID: merchantB, WalletUUID: walletB})
	chA, err := a.Charges.Create(t.Context(), scopeCharge(), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	chB, err := b.Charges.Create(t.Context(), scopeCharge(), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.False(t, chB.Meta.FromJournal, "merchant B's charge is sent")
	assert.NotEqual(t, chA.UUID, chB.UUID)
	assert.Equal(t, 2, srv.Ledger().Len(), "each merchant charged once")
}

// The same client ID on two environments (two fakes, two origins) records
// under two scopes: the second environment's charge is sent, never
// answered from the first's entry.
func TestSameClientIDOnTwoEnvironmentsNeverSharesEntries(t *testing.T) {
	sandbox := a55test.New(t, a55test.WithCredentials("client-1", "secret-1"))
	production := a55test.New(t, a55test.WithCredentials("client-1", "secret-1"))
	j := journal.NewMemory()
	s, err := sandbox.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	p, err := production.Client(payonce.WithJournal(j))
	require.NoError(t, err)
	assert.NotEqual(t, s.Core().Scope(), p.Core().Scope())
	assert.Contains(t, s.Core().Scope(), "client-1")
	assert.Contains(t, s.Core().Scope(), sandbox.URL, "the scope names the origin")
	assert.NotContains(t, s.Core().Scope(), "secret-1")

	_, err = s.Charges.Create(t.Context(), scopeCharge(), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	ch, err := p.Charges.Create(t.Context(), scopeCharge(), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.False(t, ch.Meta.FromJournal)
	assert.Equal(t, 1, sandbox.Ledger().Len())
	assert.Equal(t, 1, production.Ledger().Len(), "production charged, not answered from the sandbox entry")
}

// The scope is the credential identity and the origin; an explicit
// WithScope wins whatever its place among the options.
func TestScopeIsIdentityAndOrigin(t *testing.T) {
	auth := a55.ClientCredentials("client-7", "secret-7")
	auth.TokenURL = "https://auth.example.com/oauth2/token"
	for _, tc := range []struct{ base, want string }{
		{a55.SandboxURL, "a55:client-7@https://sandbox.api.a55.tech"},
		{a55.ProductionURL + "/", "a55:client-7@https://api.a55.tech"},
		{"https://API.a55.tech:443/v1", "a55:client-7@https://api.a55.tech"},
		{"https://api.a55.tech:8443", "a55:client-7@https://api.a55.tech:8443"},
		{"http://127.0.0.1:8080", "a55:client-7@http://127.0.0.1:8080"},
		{"http://[::1]:80", "a55:client-7@http://[::1]"},
	} {
		c, err := a55.NewClient(auth, payonce.WithBaseURL(tc.base))
		require.NoError(t, err, tc.base)
		assert.Equal(t, tc.want, c.Core().Scope(), tc.base)
	}
	c, err := a55.NewClient(auth, payonce.WithScope("mine"), payonce.WithBaseURL(a55.ProductionURL))
	require.NoError(t, err)
	assert.Equal(t, "mine", c.Core().Scope())
}

// A scope given by hand that holds the client secret or the access token
// is refused: journal rows would hold the credential.
func TestScopeHoldingACredentialIsRefused(t *testing.T) {
	auth := a55.ClientCredentials("client-7", "secret-of-client-7")
	auth.TokenURL = "https://auth.example.com/oauth2/token"
	_, err := a55.NewClient(auth, payonce.WithScope("shop/secret-of-client-7"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.NotContains(t, err.Error(), "secret-of-client-7")
	_, err = a55.NewClient(a55.AccessToken("tok-0123456789"), payonce.WithScope("a55:tok-0123456789"))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.NotContains(t, err.Error(), "tok-0123456789")
}

// Entries an earlier payonce recorded under "a55:<client_id>" (and "a55:"
// with an access token), before scopes named the origin, are never
// missed: unmapped, a journaled call is refused, nothing sent; mapped
// (payonce.WithLegacyScopes), they move into today's scope.
func TestEntriesUnderEarlierScopeFormsAreNotMissed(t *testing.T) {
	srv := a55test.New(t, a55test.WithCredentials("client-1", "secret-1"))
	for name, tc := range map[string]struct {
		old  string
		auth func() a55.Auth
		opts []payonce.Option
	}{
		"client credentials": {old: "a55:client-1", auth: func() a55.Auth {
			a := a55.ClientCredentials("client-1", "secret-1")
			a.TokenURL = srv.TokenURL()
			return a
		}},
		"access token": {old: "a55:", auth: func() a55.Auth { return a55.AccessToken(srv.IssueToken()) }, opts: []payonce.Option{payonce.WithScope("shop-1/a55-sandbox")}},
	} {
		t.Run(name, func(t *testing.T) {
			j := journal.NewMemory()
			_, _, err := j.Reserve(t.Context(), journaltest.Entry(tc.old, "order-0/charge"))
			require.NoError(t, err)
			client := func(extra ...payonce.Option) *a55.Client {
				c, err := a55.NewClient(tc.auth(), append(append([]payonce.Option{payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(srv.HTTPClient()),
					payonce.WithRetryPolicy(fastPolicy()), payonce.WithJournal(j)}, tc.opts...), extra...)...)
				require.NoError(t, err)
				return c.WithAccount(srv.Account())
			}
			before := srv.Ledger().Len()
			_, err = client().Charges.Create(t.Context(), scopeCharge(), payonce.WithReference("order-1/charge"))
			require.ErrorIs(t, err, payonce.ErrInvalidConfig)
			var le *payonce.LegacyScopeError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.old, le.Scope)
			assert.Equal(t, before, srv.Ledger().Len(), "nothing sent")

			c := client(payonce.WithLegacyScopes(tc.old))
			_, err = c.Charges.Create(t.Context(), scopeCharge(), payonce.WithReference("order-1/charge"))
			require.NoError(t, err)
			got, err := j.Get(t.Context(), c.Core().Scope(), "order-0/charge")
			require.NoError(t, err, "moved into today's scope")
			assert.Equal(t, "key-order-0/charge", got.Key)
		})
	}
}
