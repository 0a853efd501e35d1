package a55_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/payoncetest"
)

// pathRequests counts the requests the fake received on path.
func pathRequests(srv *a55test.Server, path string) int {
	n := 0
	for _, a := range srv.Requests() {
		if a.Path == path {
			n++
		}
	}
	return n
}

func TestChargeListRefusesBadOptionsBeforeSending(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	for name, o := range map[string]*a55.ChargeListOptions{
		"limit 0":          {},
		"limit 101":        {Limit: 101},
		"negative limit":   {Limit: -1},
		"negative page":    {Limit: 10, Page: -1},
		"unknown status":   {Limit: 10, Status: "approved"},
		"end before start": {Limit: 10, DateStart: time.Now(), DateEnd: time.Now().Add(-time.Hour)},
	} {
		_, err := c.Charges.List(ctx, o)
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, name)
		var ve *payonce.ValidationError
		require.ErrorAs(t, err, &ve, name)
		var ae *payonce.APIError
		require.ErrorAs(t, err, &ae, name)
		assert.Zero(t, ae.Attempts, name)
	}
	for _, bad := range []*a55.ChargeListOptions{{Limit: 500}, {Page: -2}, {Status: "nope"}} {
		n := 0
		for ch, err := range c.Charges.All(ctx, bad) {
			require.Nil(t, ch)
			require.ErrorIs(t, err, payonce.ErrInvalidRequest)
			n++
		}
		require.Equal(t, 1, n)
	}
	assert.Zero(t, pathRequests(srv, a55.PathChargeList), "nothing was sent")
}

func TestChargeListPagesAndAll(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	mine := srv.WalletUUID() // the client's account's wallet
	var created []string
	for i := range 25 {
		r := refCharge(t, a55test.CardConfirms)
		r.Description = fmt.Sprintf("order-%d", i)
		ch, err := c.Charges.Create(ctx, r)
		require.NoError(t, err)
		created = append(created, ch.UUID)
	}
	// A charge in another wallet is not listed.
	w, err := c.Wallets.Create(ctx, walletRequest("list"))
	require.NoError(t, err)
	other := refCharge(t, a55test.CardConfirms)
	other.WalletUUID, other.MerchantID = w.UUID, w.MerchantUUID // the merchant A55 made for the wallet
	_, err = c.Charges.Create(ctx, other)
	require.NoError(t, err)

	var got []string
	for page := 1; ; page++ {
		p, err := c.Charges.List(ctx, &a55.ChargeListOptions{WalletUUID: mine, Page: page, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, page, p.Page)
		assert.Equal(t, 10, p.Limit)
		assert.Equal(t, 25, p.Total)
		assert.Equal(t, -1, p.TotalPages, "the list's assumed shape reports no page count: HasMore reads the total")
		for _, ch := range p.Charges {
			got = append(got, ch.UUID)
		}
		if !p.HasMore() {
			assert.Len(t, p.Charges, 5)
			break
		}
		require.Less(t, page, 3)
	}
	assert.Equal(t, created, got)

	got = got[:0]
	for ch, err := range c.Charges.All(ctx, &a55.ChargeListOptions{WalletUUID: mine, Limit: 7}) {
		require.NoError(t, err)
		got = append(got, ch.UUID)
	}
	assert.Equal(t, created, got)

	// nil options: the first page of the account's wallet (A55 lists one
	// wallet at a time), then every charge of it; the caller's options
	// are left as they were, the account's wallet not written in.
	p1, err := c.Charges.List(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, a55.DefaultChargeListLimit, p1.Limit)
	assert.Len(t, p1.Charges, a55.DefaultChargeListLimit)
	assert.Equal(t, 25, p1.Total)
	n := 0
	for _, err := range c.Charges.All(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 25, n)
	opts := &a55.ChargeListOptions{Limit: 7}
	for _, err := range c.Charges.All(ctx, opts) {
		require.NoError(t, err)
	}
	assert.Equal(t, a55.ChargeListOptions{Limit: 7}, *opts)
	p, err := c.Charges.List(ctx, &a55.ChargeListOptions{WalletUUID: w.UUID, Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, p.Total, "the other wallet's charge, listed by its wallet")

	// Breaking out stops the paging.
	n = 0
	for range c.Charges.All(ctx, &a55.ChargeListOptions{WalletUUID: mine, Limit: 2}) {
		n++
		if n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)

	// Description (a merchant reference; a fake extension, filtered by the
	// client too).
	p, err = c.Charges.List(ctx, &a55.ChargeListOptions{WalletUUID: mine, Limit: 100, Description: "order-7"})
	require.NoError(t, err)
	require.Len(t, p.Charges, 1)
	assert.Equal(t, created[7], p.Charges[0].UUID)
}

func TestChargeListFiltersOnStatusAndDates(t *testing.T) {
	srv, c := newFake(t)
	ctx := context.Background()
	confirmed, err := c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms))
	require.NoError(t, err)
	srv.Clock().Advance(time.Hour)
	// A PIX charge waits for the payer: issued (a pre-authorisation is
	// confirmed like the other, nothing captured yet).
	pix := chargeOf("100.00", "")
	pix.TypeCharge, pix.Card = a55.TypePix, nil
	pending, err := c.Charges.Create(ctx, pix)
	require.NoError(t, err)
	require.Equal(t, a55.StatusIssued, pending.Status)

	ids := func(o *a55.ChargeListOptions) []string {
		t.Helper()
		var out []string
		for ch, err := range c.Charges.All(ctx, o) {
			require.NoError(t, err)
			out = append(out, ch.UUID)
		}
		return out
	}
	assert.Equal(t, []string{pending.UUID}, ids(&a55.ChargeListOptions{Status: a55.StatusIssued}))
	assert.Empty(t, ids(&a55.ChargeListOptions{Status: a55.StatusPending}))
	assert.Equal(t, []string{confirmed.UUID}, ids(&a55.ChargeListOptions{Status: a55.StatusConfirmed}))
	assert.Empty(t, ids(&a55.ChargeListOptions{Status: a55.StatusRefunded}))
	assert.Equal(t, []string{pending.UUID}, ids(&a55.ChargeListOptions{DateStart: pending.CreatedAt.Add(-time.Minute)}))
	assert.Equal(t, []string{confirmed.UUID}, ids(&a55.ChargeListOptions{DateEnd: pending.CreatedAt.Add(-time.Minute)}))

	_, err = c.Charges.List(ctx, &a55.ChargeListOptions{Limit: 5, WalletUUID: "no-such-wallet"})
	require.ErrorIs(t, err, payonce.ErrNotFound)
}

// The story the list exists for: the charge commits, its answer is lost
// and the client's own lookup cannot tell (its list fails): the create is
// in doubt with its key. The merchant settles the outcome by listing the
// charges its key created, without sending the card again.
func TestLostAnswerIsSettledByListingNotByResending(t *testing.T) {
	srv := a55test.New(t)
	one := payoncetest.FastRetryPolicy()
	one.MaxAttempts = 1
	c, err := srv.Client(payonce.WithRetryPolicy(one))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))

	k := key("lost-answer")
	_, err = c.Charges.Create(ctx, refCharge(t, a55test.CardConfirms), payonce.WithKey(keytest.Now(t, k)))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	require.False(t, payonce.IsResumable(err), "never re-sent blindly")
	stored := payonce.KeyOf(err).String() // what the job keeps: the key, not the card

	p, err := c.Charges.List(ctx, &a55.ChargeListOptions{Limit: 10, IdempotencyKey: stored})
	require.NoError(t, err)
	require.Len(t, p.Charges, 1)
	assert.Equal(t, a55.StatusConfirmed, p.Charges[0].Status)
	assert.Equal(t, k, p.Charges[0].IdempotencyKey)
	assert.True(t, srv.Ledger().ExecutedOnce(k))

	got, err := c.Charges.Get(ctx, p.Charges[0].UUID, p.Charges[0].WalletUUID, payonce.WithKey(keytest.Now(t, "ignored-on-reads-0001")))
	require.NoError(t, err)
	assert.Equal(t, p.Charges[0].UUID, got.UUID)
	assert.Empty(t, got.Meta.Key, "a read carries no key")
}

// A server that ignores the key filter cannot make another charge look
// like the one searched for: the client filters the answer too.
func TestChargeListFiltersTheAnswerItself(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[{"charge_uuid":"a","status":"confirmed","amount":"1.00"},` +
			`{"charge_uuid":"b","status":"confirmed","amount":"1.00","idempotency_key":"wanted-key-0000001"}],"total":2}`))
	}))
	defer ts.Close()
	c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(ts.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	c = c.WithAccount(testAccount)
	p, err := c.Charges.List(context.Background(), &a55.ChargeListOptions{Limit: 10, IdempotencyKey: "wanted-key-0000001"})
	require.NoError(t, err)
	require.Len(t, p.Charges, 1)
	assert.Equal(t, "b", p.Charges[0].UUID)
	assert.False(t, p.HasMore())
}

// Hostile or odd list answers: errors, never panics, never endless paging.
func TestChargeListHostileAnswers(t *testing.T) {
	var calls atomic.Int32
	var bodyV atomic.Value
	setBody := func(b string) { bodyV.Store(b) }
	setBody("")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(bodyV.Load().(string)))
	}))
	defer ts.Close()
	c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(ts.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	c = c.WithAccount(testAccount)
	ctx := context.Background()

	for _, b := range []string{`{"data":"x"}`, `[1,2]`, `{"data":[{"created_at":5}]}`, `nope`} {
		setBody(b)
		_, err := c.Charges.List(ctx, &a55.ChargeListOptions{Limit: 10})
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, b)
	}

	// A server that ignores page and always claims more: All stops once it
	// sees the same page again, with an error, never as if complete.
	setBody(`{"data":[{"charge_uuid":"x","status":"confirmed"},{"charge_uuid":"y","status":"confirmed"}],"total_pages":1000}`)
	calls.Store(0)
	n := 0
	var last error
	for _, err := range c.Charges.All(ctx, &a55.ChargeListOptions{Limit: 2}) {
		if err != nil {
			last = err
			continue
		}
		n++
	}
	assert.Equal(t, 2, n)
	assert.Equal(t, int32(2), calls.Load())
	require.ErrorIs(t, last, payonce.ErrMalformedResponse)

	// A bare array is a page too; null members are skipped.
	setBody(`[{"charge_uuid":"z","status":"pending"},null]`)
	p, err := c.Charges.List(ctx, &a55.ChargeListOptions{Limit: 10})
	require.NoError(t, err)
	require.Len(t, p.Charges, 1)
	assert.Equal(t, -1, p.Total)
	assert.False(t, p.HasMore())
	assert.False(t, strings.Contains(fmt.Sprint(p.Charges[0]), "tok"))
}

// Reads take per-call options like every other call.
func TestReadsTakeCallOptions(t *testing.T) {
	var seen atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.Path + " " + r.Header.Get("X-Trace-Id"))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == a55.PathChargeList {
			_, _ = w.Write([]byte(`{"data":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"charge_uuid":"c1","status":"confirmed"}`))
	}))
	defer ts.Close()
	c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(ts.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	c = c.WithAccount(testAccount)
	ctx := context.Background()
	_, err = c.Charges.Get(ctx, "c1", "w1", payonce.WithHeader("X-Trace-Id", "trace-get"))
	require.NoError(t, err)
	assert.Equal(t, a55.PathCharges+" trace-get", seen.Load())
	_, err = c.Charges.List(ctx, &a55.ChargeListOptions{Limit: 5}, payonce.WithHeader("X-Trace-Id", "trace-list"))
	require.NoError(t, err)
	assert.Equal(t, a55.PathChargeList+" trace-list", seen.Load())
}

// The client's own status filter keeps a charge whatever the case of its
// status.
func TestChargeListStatusFilterInAnyCase(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[{"charge_uuid":"a","status":"ERROR","amount":"1.00"},{"charge_uuid":"b","status":"confirmed","amount":"1.00"}],"total":2}`))
	}))
	defer ts.Close()
	c, err := a55.NewClient(a55.AccessToken("tok"), payonce.WithBaseURL(ts.URL), payonce.WithRetryPolicy(fastPolicy()))
	require.NoError(t, err)
	p, err := c.Charges.List(context.Background(), &a55.ChargeListOptions{WalletUUID: testWallet, Limit: 10, Status: a55.StatusError})
	require.NoError(t, err)
	require.Len(t, p.Charges, 1)
	assert.Equal(t, "a", p.Charges[0].UUID)
}
