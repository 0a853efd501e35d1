package a55test_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/payoncetest"
)

func TestKeyScopePerClient(t *testing.T) {
	// One server, two OAuth2 clients: an Idempotency-Key is scoped per
	// client, so the same key and body under each runs twice.
	s := newFake(t, a55test.WithExtraCredentials("client-2", "secret-2"), a55test.WithExtraCredentials("client-3", "secret-3"))

	// The extra client gets tokens from the token endpoint like the primary.
	cc := clientcredentials.Config{ClientID: "client-2", ClientSecret: "secret-2", TokenURL: s.TokenURL()}
	tok, err := cc.Token(context.Background())
	require.NoError(t, err)
	bad := clientcredentials.Config{ClientID: "client-2", ClientSecret: "secret-3", TokenURL: s.TokenURL()}
	_, err = bad.Token(context.Background())
	require.Error(t, err, "each client has its own secret")

	send := func(token string) answer {
		t.Helper()
		c := &http.Client{Transport: bearer{token}}
		return do(t, c, http.MethodPost, s.URL+a55test.ChargePath, key1, guideCharge)
	}
	a := send(s.IssueToken())
	require.Equal(t, 200, a.Status, "%s", a.Raw)
	b := send(tok.AccessToken)
	require.Equal(t, 200, b.Status, "%s", b.Raw)
	assert.NotEqual(t, a.JSON["charge_uuid"], b.JSON["charge_uuid"], "another client's stored answer is not replayed")
	c := send(s.IssueTokenFor("client-2"))
	require.Equal(t, 200, c.Status)
	assert.Equal(t, b.JSON["charge_uuid"], c.JSON["charge_uuid"], "a retry under client-2 replays client-2's answer")

	ops := s.Ledger().ByKey(key1)
	require.Len(t, ops, 2)
	assert.Equal(t, a55test.DefaultClientID, ops[0].Credential)
	assert.Equal(t, "client-2", ops[1].Credential)
	assert.Equal(t, a.JSON["charge_uuid"], ops[0].ID)
	assert.Equal(t, b.JSON["charge_uuid"], ops[1].ID)
}

// bearer adds a fixed bearer token.
type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(out)
}

func TestOneClockDrivesBothFakes(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clk := payoncetest.NewFixedClock(start)
	a55srv := a55test.New(t, payoncetest.WithClock(clk))
	cpsrv := coinepaytest.New(t, payoncetest.WithClock(clk))
	require.Same(t, clk, a55srv.Clock())
	require.Same(t, clk, cpsrv.Clock())

	dates := func() (a55Date, cpDate time.Time) {
		t.Helper()
		a := charge(t, a55srv, "", guideCharge)
		require.Equal(t, 200, a.Status, "%s", a.Raw)
		cp := do(t, cpsrv.HTTPClient(), http.MethodPost, cpsrv.URL+"/api/v1/openapi/card/apply",
			"apply-"+a.JSON["charge_uuid"].(string), `{"header_id":"h1","package_id":"p1"}`)
		require.Equal(t, 200, cp.Status, "%s", cp.Raw)
		a55Date, err := http.ParseTime(a.Header.Get("Date"))
		require.NoError(t, err)
		cpDate, err = http.ParseTime(cp.Header.Get("Date"))
		require.NoError(t, err)
		return a55Date, cpDate
	}
	a, cp := dates()
	assert.Equal(t, start, a.UTC())
	assert.Equal(t, start, cp.UTC())

	clk.Advance(2 * time.Hour)
	a, cp = dates()
	assert.Equal(t, start.Add(2*time.Hour), a.UTC(), "the A55 Date header follows the shared clock")
	assert.Equal(t, start.Add(2*time.Hour), cp.UTC(), "the Coinepay Date header follows the shared clock")
	assert.Equal(t, start.Add(2*time.Hour), a55srv.Ledger().Operations()[1].Time.UTC())
	assert.Equal(t, start.Add(2*time.Hour), cpsrv.Ledger().Operations()[1].Time.UTC())
}
