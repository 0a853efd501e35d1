package a55_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func settleCharge(amount string) *a55.ChargeCreateRequest {
	r := chargeOf(amount, a55test.CardConfirms)
	r.Description = "order-1"
	return r
}

// oneAttempt is a client of srv on j that sends each operation once.
func oneAttempt(t *testing.T, srv *a55test.Server, j payonce.Journal) *a55.Client {
	t.Helper()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(p))
	require.NoError(t, err)
	return c
}

// inDoubt sends req once under ref from a one-attempt client on a memory
// journal against a new server, whose next charge meets fault (after
// FaultDropAfterCommit, the list that looks the lost answer up fails: it
// cannot tell); the call must fail, and the key of its error is returned.
func inDoubt(t *testing.T, fault payoncetest.FaultKind, req *a55.ChargeCreateRequest, ref string) (*a55test.Server, *journal.Memory, *a55.Client, payonce.Key) {
	t.Helper()
	srv := a55test.New(t)
	j := journal.NewMemory()
	c := oneAttempt(t, srv, j)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: fault, Path: a55test.ChargePath, Count: 1}))
	if fault == payoncetest.FaultDropAfterCommit {
		require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
	}
	_, err := c.Charges.Create(t.Context(), req, payonce.WithReference(ref))
	require.Error(t, err)
	return srv, j, c, payonce.KeyOf(err)
}

// A charge whose answer was lost is in doubt once its key is past the
// window; the settle lookup finds it at A55 and records it, the next call
// answers from the journal, and the ledger shows one execution.
func TestSettleCreateFindsTheChargeOfALostAnswer(t *testing.T) {
	srv, _, c, k := inDoubt(t, payoncetest.FaultDropAfterCommit, settleCharge("42.00"), "order-1/charge")
	ctx, key := t.Context(), k.String()
	require.Equal(t, 1, srv.Ledger().Count(key), "the charge ran; its answer was lost")

	srv.Clock().Advance(25 * time.Hour)
	got, err := c.Charges.SettleCreate(ctx, "order-1/charge", nil)
	require.NoError(t, err)
	assert.True(t, got.Recorded)
	assert.Equal(t, "succeeded", got.Entry.SettledOutcome())
	assert.Equal(t, payonce.JournalSucceeded, got.Entry.State)
	ran := srv.Ledger().ByKey(key)
	require.Len(t, ran, 1)
	assert.Equal(t, ran[0].ID, got.Charge.UUID)

	sent := srv.Stats().Requests
	again, err := c.Charges.Create(ctx, settleCharge("42.00"), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.Equal(t, ran[0].ID, again.UUID)
	assert.Equal(t, sent, srv.Stats().Requests, "answered from the journal, nothing sent")
	assert.True(t, srv.Ledger().ExecutedOnce(key), "one execution")

	twice, err := c.Charges.SettleCreate(ctx, "order-1/charge", nil)
	require.NoError(t, err)
	assert.False(t, twice.Recorded, "a settled entry is returned as it is")
	assert.Equal(t, "succeeded", twice.Entry.SettledOutcome())
}

// An entry wrongly settled by hand as not executed gives way to the charge
// the lookup finds under its key: a success outranks every failure.
func TestSettleCreateFindsTheChargeOfAWrongFailure(t *testing.T) {
	srv, _, c, k := inDoubt(t, payoncetest.FaultDropAfterCommit, settleCharge("49.00"), "order-1/charge")
	ctx, key := t.Context(), k.String()
	_, err := c.Core().Settle(ctx, "order-1/charge", payonce.Settlement{State: payonce.JournalFailed, NotExecuted: true, Reason: "a wrong guess"})
	require.NoError(t, err)

	got, err := c.Charges.SettleCreate(ctx, "order-1/charge", nil)
	require.NoError(t, err)
	assert.True(t, got.Recorded)
	assert.Equal(t, "succeeded", got.Entry.SettledOutcome())
	assert.Equal(t, srv.Ledger().ByKey(key)[0].ID, got.Charge.UUID)
	again, err := c.Charges.Create(ctx, settleCharge("49.00"), payonce.WithReference("order-1/charge"))
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.True(t, srv.Ledger().ExecutedOnce(key))
}

// A charge that never ran (every attempt refused before the commit) is
// not found: without RecordNotExecuted that is payonce.ErrLookupNotFound with the
// key, and the entry stays pending; with it, once the window is over, it
// is recorded as not executed and later calls say so, nothing sent.
func TestSettleCreateNotFound(t *testing.T) {
	srv, j, c, k := inDoubt(t, payoncetest.FaultErrorBeforeCommit, settleCharge("43.00"), "order-1/charge")
	ctx, key := t.Context(), k.String()
	require.Zero(t, srv.Ledger().Len())
	srv.Clock().Advance(25 * time.Hour)

	_, err := c.Charges.SettleCreate(ctx, "order-1/charge", nil)
	require.ErrorIs(t, err, payonce.ErrLookupNotFound)
	assert.Equal(t, key, payonce.KeyOf(err).String())
	e, gerr := j.Get(ctx, c.Core().Scope(), "order-1/charge")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State, "nothing recorded")

	got, err := c.Charges.SettleCreate(ctx, "order-1/charge", &a55.SettleOptions{RecordNotExecuted: true})
	require.NoError(t, err)
	assert.Equal(t, "not_executed", got.Entry.SettledOutcome())
	assert.True(t, got.Entry.NotExecuted())
	sent := srv.Stats().Requests
	_, err = c.Charges.Create(ctx, settleCharge("43.00"), payonce.WithReference("order-1/charge"))
	require.ErrorIs(t, err, payonce.ErrNotExecuted)
	assert.Equal(t, sent, srv.Stats().Requests)
	assert.Zero(t, srv.Ledger().Len())
}

// The window must be over before "not found" may become "not executed":
// an attempt still travelling could yet create the charge.
func TestSettleCreateNotFoundInsideTheWindowStaysPending(t *testing.T) {
	_, _, c, _ := inDoubt(t, payoncetest.FaultErrorBeforeCommit, settleCharge("44.00"), "order-1/charge")
	_, err := c.Charges.SettleCreate(t.Context(), "order-1/charge", &a55.SettleOptions{RecordNotExecuted: true})
	require.ErrorIs(t, err, payonce.ErrLookupNotFound)
}

// Settling with another request than the recorded one is refused before
// anything is listed; an entry under which nothing was ever sent is not
// executed without a lookup.
func TestSettleCreateChecksTheRequest(t *testing.T) {
	srv, j, c, _ := inDoubt(t, payoncetest.FaultDropAfterCommit, settleCharge("45.00"), "order-1/charge")
	ctx := t.Context()
	sent := srv.Stats().Requests
	other := settleCharge("45.00")
	other.Card.Number = payonce.CardNumber(a55test.TestCard(4)) // another card, found by the same amount and description
	_, err := c.Charges.SettleCreate(ctx, "order-1/charge", &a55.SettleOptions{Request: other})
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	require.NotEmpty(t, srv.Ledger().Operations())
	assert.Equal(t, payonce.KeyOf(err).String(), srv.Ledger().Operations()[0].IdempotencyKey)
	_, err = c.Charges.SettleCreate(ctx, "no-such-order", nil)
	require.ErrorIs(t, err, journal.ErrNotFound)
	assert.Equal(t, sent, srv.Stats().Requests, "nothing listed")

	now := srv.Clock().Now()
	body, err := corekit.MarshalWire(settleCharge("46.00"))
	require.NoError(t, err)
	_, _, err = j.Reserve(ctx, payonce.JournalEntry{Scope: c.Core().Scope(), Reference: "order-2/charge", Operation: "charges.create",
		Method: http.MethodPost, Path: a55.PathCharges, Key: "reserved-key-order-2", KeyCreated: now, State: payonce.JournalPending,
		Fingerprint: c.Core().Fingerprint(http.MethodPost, a55.PathCharges, body), CreatedAt: now, UpdatedAt: now})
	require.NoError(t, err)
	got, err := c.Charges.SettleCreate(ctx, "order-2/charge", nil)
	require.NoError(t, err)
	assert.Equal(t, "not_executed", got.Entry.SettledOutcome(), "never sent: not executed")
	assert.Equal(t, sent, srv.Stats().Requests, "nothing listed")
}

// listServer is an A55 stand-in whose charges carry no key, as A55's do:
// every POST answers a bare 503 (so the entry stays pending, sent), the
// list right after it, the create looking its lost answer up, a bare 503
// too (the lookup cannot tell: the entry stays in doubt), and every other
// list answers charges, which lists counts.
func listServer(t *testing.T, charges []map[string]any) (*httptest.Server, *atomic.Int32) {
	var lists atomic.Int32
	var posted atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted.Store(true)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if posted.Swap(false) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		lists.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"data": charges, "page": 1, "total": len(charges)})
	}))
	t.Cleanup(srv.Close)
	return srv, &lists
}

// listedCharge is a charge as A55's list may answer it: the reference's
// fields, no key.
func listedCharge(uuid, status, amount string, created time.Time) map[string]any {
	return map[string]any{"charge_uuid": uuid, "status": status, "installment_value": json.Number(amount), "installment_count": 1,
		"currency": "BRL", "type_charge": "credit_card", "wallet_uuid": testWallet, "merchant_id": testMerchant,
		"description": "order-1", "due_date": "2099-12-31", "created_at": created.UTC().Format(time.RFC3339),
		"message": []map[string]any{{"code": "05", "description": "not authorised"}}}
}

// Against a server whose charges carry no key the lookup matches by the
// request's fields: two matching charges are ambiguous (nothing recorded,
// the entry stays pending), a charge of another amount, wallet, merchant
// or time is not a match, and charges only in status error settle as
// failed.
func TestSettleCreateMatchesByTheRequestAndNeverGuesses(t *testing.T) {
	now := time.Now()
	for name, tc := range map[string]lookupCase{
		"two matches":           {[]map[string]any{listedCharge("ch_1", "confirmed", "47.00", now), listedCharge("ch_2", "confirmed", "47.00", now)}, payonce.ErrLookupAmbiguous, "", ""},
		"one match, one other":  {[]map[string]any{listedCharge("ch_1", "confirmed", "47.00", now), listedCharge("ch_2", "confirmed", "48.00", now)}, nil, "succeeded", "ch_1"},
		"one match, declines":   {[]map[string]any{listedCharge("ch_0", "error", "47.00", now), listedCharge("ch_1", "pending", "47.00", now)}, nil, "succeeded", "ch_1"},
		"outside the window":    {[]map[string]any{listedCharge("ch_1", "confirmed", "47.00", now.Add(-48*time.Hour))}, payonce.ErrLookupNotFound, "", ""},
		"only declined charges": {[]map[string]any{listedCharge("ch_0", "error", "47.00", now), listedCharge("ch_3", "error", "47.00", now)}, nil, "failed", "ch_3"},
		"another wallet": {[]map[string]any{func() map[string]any {
			c := listedCharge("ch_1", "confirmed", "47.00", now)
			c["wallet_uuid"] = "wal_other"
			return c
		}()}, payonce.ErrLookupNotFound, "", ""},
		"another merchant": {[]map[string]any{func() map[string]any {
			c := listedCharge("ch_1", "confirmed", "47.00", now)
			c["merchant_id"] = "mer_other"
			return c
		}()}, payonce.ErrLookupNotFound, "", ""},
		"the whole amount only": {[]map[string]any{func() map[string]any {
			c := listedCharge("ch_1", "confirmed", "47.00", now)
			delete(c, "installment_value")
			c["amount"] = "47.00"
			return c
		}()}, nil, "succeeded", "ch_1"},
		"no amount": {[]map[string]any{func() map[string]any {
			c := listedCharge("ch_1", "confirmed", "47.00", now)
			delete(c, "installment_value")
			return c
		}()}, payonce.ErrLookupNotFound, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			runLookupCase(t, tc, &a55.SettleOptions{Request: settleCharge("47.00")})
		})
	}
}

// The provider's clock far from the journal's (here 30 days ahead) puts
// the charge outside the window: a lookup allowed to record "not
// executed" still finds it by its key, where the server reports keys, and
// records the success.
func TestSettleCreateFindsTheChargeByItsKeyWhateverTheClocks(t *testing.T) {
	srv := a55test.New(t)
	clientClock := payoncetest.NewClock()
	p := fastPolicy()
	p.MaxAttempts = 1
	j := journal.NewMemory()
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(p), payoncetest.ClientClock(clientClock.Now))
	require.NoError(t, err)
	srv.Clock().Advance(30 * 24 * time.Hour)
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	_, err = c.Charges.Create(t.Context(), settleCharge("50.00"), payonce.WithReference("order-1/charge"))
	require.Error(t, err)
	key := payonce.KeyOf(err).String()
	require.Equal(t, 1, srv.Ledger().Count(key))
	clientClock.Advance(26 * time.Hour)

	got, err := c.Charges.SettleCreate(t.Context(), "order-1/charge", &a55.SettleOptions{RecordNotExecuted: true})
	require.NoError(t, err)
	assert.Equal(t, "succeeded", got.Entry.SettledOutcome(), "never 'not executed' for a charge that ran")
	assert.Equal(t, srv.Ledger().ByKey(key)[0].ID, got.Charge.UUID)
}

// A charge in doubt is settled from the journal alone: a process that
// never saw the card (a new client on the same journal, no request given)
// finds the charge by the entry's summary, which holds nothing of the
// card or the payer.
func TestSettleCreateNeedsNoCard(t *testing.T) {
	req := settleCharge("51.00")
	req.Payer.Name, req.Payer.Email, req.Payer.TaxID = "Zhang Wei", "zw@example.com", "12345678909"
	srv, j, c, key := inDoubt(t, payoncetest.FaultDropAfterCommit, req, "order-1/charge")
	ctx := t.Context()

	e, err := j.Get(ctx, c.Core().Scope(), "order-1/charge")
	require.NoError(t, err)
	assert.JSONEq(t, `{"installment_value":"51.00","installment_count":1,"currency":"BRL","type_charge":"credit_card",`+
		`"wallet_uuid":"`+srv.WalletUUID()+`","merchant_id":"`+srv.MerchantID()+`","description":"order-1","due_date":"2099-12-31"}`, e.Summary)
	for _, secret := range []string{string(a55test.CardConfirms), "1111", "123", "TEST", "Zhang", "zw@example.com", "12345678909", "2098", "Paulista"} {
		assert.NotContains(t, e.Summary, secret)
	}

	later := oneAttempt(t, srv, j) // another process: no card, no request
	got, err := later.Charges.SettleCreate(ctx, "order-1/charge", nil)
	require.NoError(t, err)
	assert.Equal(t, "succeeded", got.Entry.SettledOutcome())
	assert.Equal(t, srv.Ledger().ByKey(key.String())[0].ID, got.Charge.UUID)
}

// Against a server whose charges carry no key, the summary alone never
// guesses: two matches are ambiguous, another amount, description or time
// is no match, charges only in status error settle as failed.
func TestSettleCreateMatchesByTheSummaryAndNeverGuesses(t *testing.T) {
	now := time.Now()
	with := func(uuid, field string, v any) map[string]any {
		c := listedCharge(uuid, "confirmed", "47.00", now)
		c[field] = v
		return c
	}
	for name, tc := range map[string]lookupCase{
		"one match":             {[]map[string]any{listedCharge("ch_1", "confirmed", "47.00", now)}, nil, "succeeded", "ch_1"},
		"two matches":           {[]map[string]any{listedCharge("ch_1", "confirmed", "47.00", now), listedCharge("ch_2", "paid", "47.00", now)}, payonce.ErrLookupAmbiguous, "", ""},
		"another amount":        {[]map[string]any{listedCharge("ch_1", "confirmed", "47.01", now)}, payonce.ErrLookupNotFound, "", ""},
		"another description":   {[]map[string]any{with("ch_1", "description", "order-2")}, payonce.ErrLookupNotFound, "", ""},
		"no description":        {[]map[string]any{with("ch_1", "description", "")}, payonce.ErrLookupNotFound, "", ""},
		"another currency":      {[]map[string]any{with("ch_1", "currency", "USD")}, payonce.ErrLookupNotFound, "", ""},
		"another type":          {[]map[string]any{with("ch_1", "type_charge", "pix")}, payonce.ErrLookupNotFound, "", ""},
		"outside the window":    {[]map[string]any{listedCharge("ch_1", "confirmed", "47.00", now.Add(-48*time.Hour))}, payonce.ErrLookupNotFound, "", ""},
		"only declined charges": {[]map[string]any{listedCharge("ch_0", "error", "47.00", now)}, nil, "failed", "ch_0"},
	} {
		t.Run(name, func(t *testing.T) {
			runLookupCase(t, tc, nil)
		})
	}
}

// lookupCase is what a listServer lists and what settling against it
// gives: kind, with nothing recorded, or outcome with charge uuid.
type lookupCase struct {
	listed  []map[string]any
	kind    error
	outcome string
	uuid    string
}

// runLookupCase creates a charge in doubt against a listServer of
// tc.listed, settles it with opts from another client on the journal, and
// checks the outcome tc expects.
func runLookupCase(t *testing.T, tc lookupCase, opts *a55.SettleOptions) {
	t.Helper()
	kind, outcome, uuid := tc.kind, tc.outcome, tc.uuid
	srv, lists := listServer(t, tc.listed)
	j := journal.NewMemory()
	c := stubClient(t, srv, j)
	_, err := c.Charges.Create(t.Context(), settleCharge("47.00"), payonce.WithReference("order-1/charge"))
	require.Error(t, err)
	key := payonce.KeyOf(err)

	got, err := stubClient(t, srv, j).Charges.SettleCreate(t.Context(), "order-1/charge", opts)
	assert.Positive(t, lists.Load())
	if kind != nil {
		require.ErrorIs(t, err, kind)
		assert.Equal(t, key, payonce.KeyOf(err))
		e, gerr := j.Get(t.Context(), c.Core().Scope(), "order-1/charge")
		require.NoError(t, gerr)
		assert.Equal(t, payonce.JournalPending, e.State, "nothing recorded")
		return
	}
	require.NoError(t, err)
	assert.Equal(t, outcome, got.Entry.SettledOutcome())
	assert.Equal(t, uuid, got.Charge.UUID)
}

// An entry sent without a summary (reserved by hand) cannot be matched
// without the request: a typed error naming what to give, nothing listed.
func TestSettleCreateWithoutSummaryNeedsTheRequest(t *testing.T) {
	srv, lists := listServer(t, nil)
	j := journal.NewMemory()
	c := stubClient(t, srv, j)
	now := time.Now()
	_, _, err := j.Reserve(t.Context(), payonce.JournalEntry{Scope: c.Core().Scope(), Reference: "order-3/charge", Operation: "charges.create",
		Method: http.MethodPost, Path: a55.PathCharges, Key: "reserved-key-order-3", KeyCreated: now, State: payonce.JournalPending,
		Sent: true, CreatedAt: now, UpdatedAt: now, Fingerprint: c.Core().Fingerprint(http.MethodPost, a55.PathCharges, []byte(`{}`))})
	require.NoError(t, err)
	_, err = c.Charges.SettleCreate(t.Context(), "order-3/charge", nil)
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
	assert.Contains(t, err.Error(), "SettleOptions.Request")
	assert.Equal(t, "reserved-key-order-3", payonce.KeyOf(err).String())
	assert.Zero(t, lists.Load())
}

// stubClient is a one-attempt client of a listServer on j.
func stubClient(t *testing.T, srv *httptest.Server, j payonce.Journal) *a55.Client {
	t.Helper()
	p := fastPolicy()
	p.MaxAttempts = 1
	auth := a55.ClientCredentials("client-1", "secret-1")
	auth.TokenURL = srv.URL + "/oauth2/token" // never asked: the signer below replaces the token's
	c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithJournal(j),
		payonce.WithRetryPolicy(p), payonce.WithSigner(corekit.SignerFunc(func(*http.Request, []byte) error { return nil })))
	require.NoError(t, err)
	return c.WithAccount(testAccount)
}

// A description that redaction changes is stored redacted: the lookup
// lists without it and matches the charge by the description redacted
// alike. So is one that only the journal's redaction changes (a
// secret-looking name and a word, which redact.String keeps as prose):
// the lookup must know it too, and still find the charge.
func TestSettleCreateMatchesARedactedDescription(t *testing.T) {
	for i, c := range []struct{ description, hidden string }{
		{"order 7 paid with 4111 1111 1111 1111", "4111 1111 1111 1111"},
		{"order 8 token: required", "required"},
	} {
		t.Run(c.hidden, func(t *testing.T) {
			req := settleCharge(fmt.Sprintf("%d.00", 52+i))
			req.Description = c.description
			ref := fmt.Sprintf("order-%d/charge", 7+i)
			srv, j, cl, key := inDoubt(t, payoncetest.FaultDropAfterCommit, req, ref)
			ctx := t.Context()
			e, err := j.Get(ctx, cl.Core().Scope(), ref)
			require.NoError(t, err)
			assert.NotContains(t, e.Summary, c.hidden)
			assert.Contains(t, e.Summary, `"description_redacted":true`)

			got, err := oneAttempt(t, srv, j).Charges.SettleCreate(ctx, ref, nil)
			require.NoError(t, err)
			assert.Equal(t, "succeeded", got.Entry.SettledOutcome())
			assert.Equal(t, srv.Ledger().ByKey(key.String())[0].ID, got.Charge.UUID)
		})
	}
}

// A listed charge in status "ERROR" or "Error" is a failed charge, never
// the success a lookup records.
func TestSettleCreateReadsStatusesInAnyCase(t *testing.T) {
	now := time.Now()
	for name, tc := range map[string]lookupCase{
		"only failed, capitals": {[]map[string]any{listedCharge("ch_0", "ERROR", "47.00", now), listedCharge("ch_3", "Error", "47.00", now)}, nil, "failed", "ch_3"},
		"one match, capitals":   {[]map[string]any{listedCharge("ch_0", "ERROR", "47.00", now), listedCharge("ch_1", "CONFIRMED", "47.00", now)}, nil, "succeeded", "ch_1"},
	} {
		t.Run(name, func(t *testing.T) {
			runLookupCase(t, tc, &a55.SettleOptions{Request: settleCharge("47.00")})
		})
	}
}

// noFinder is a journal that cannot say who holds a charge or which
// entries look alike (no payonce.JournalFinder), as a third party's may.
type noFinder struct{ payonce.Journal }

// Through such a journal a lookup refuses before it reads anything at
// A55: it could only guess.
func TestSettleCreateRefusesAJournalWithoutAFinder(t *testing.T) {
	srv, j, _, _ := inDoubt(t, payoncetest.FaultDropAfterCommit, settleCharge("42.00"), "order-1/charge")
	srv.Clock().Advance(25 * time.Hour)
	c := oneAttempt(t, srv, noFinder{j})
	sent := srv.Stats().Requests
	_, err := c.Charges.SettleCreate(t.Context(), "order-1/charge", nil)
	require.ErrorIs(t, err, payonce.ErrLookupUnsupported)
	assert.Contains(t, err.Error(), "JournalFinder")
	assert.Equal(t, sent, srv.Stats().Requests, "nothing read at A55")
	e, err := j.Get(t.Context(), c.Core().Scope(), "order-1/charge")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State)
}

// A declined charge's entry holds the charge as what its operation made,
// and a success holds its own.
func TestChargesCreateRecordsTheChargeAsTheResource(t *testing.T) {
	srv := a55test.New(t)
	j := journal.NewMemory()
	c := oneAttempt(t, srv, j)
	ok, err := c.Charges.Create(t.Context(), settleCharge("42.00"), payonce.WithReference("order-1/attempt-1"))
	require.NoError(t, err)
	declined := settleCharge("42.00")
	declined.Card.Number = a55test.CardDeclined
	_, err = c.Charges.Create(t.Context(), declined, payonce.WithReference("order-2/attempt-1"))
	require.ErrorIs(t, err, a55.ErrCardDeclined)
	failed, found := a55.ChargeFromError(err)
	require.True(t, found)

	e, err := j.Get(t.Context(), c.Core().Scope(), "order-1/attempt-1")
	require.NoError(t, err)
	assert.Equal(t, ok.UUID, e.ResourceID)
	e, err = j.Get(t.Context(), c.Core().Scope(), "order-2/attempt-1")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalFailed, e.State)
	assert.Equal(t, failed.UUID, e.ResourceID)
}

// Another entry of the same request whose charge is known made no other
// charge that succeeded, though it may have made one in status error
// (an earlier attempt's): a success found is the entry's even so. An
// entry of the same request still in doubt could have made either: the
// lookup refuses and names it.
func TestSettleCreateWeighsTheOtherEntriesOfTheSameRequest(t *testing.T) {
	now := time.Now()
	listed := []map[string]any{listedCharge("ch_y", "confirmed", "47.00", now), listedCharge("ch_z", "error", "47.00", now)}
	for name, tc := range map[string]struct {
		rival   func(e payonce.JournalEntry) payonce.JournalEntry
		kind    error
		outcome string
	}{
		"a rival whose charge is known": {rival: func(e payonce.JournalEntry) payonce.JournalEntry {
			e.State, e.ResourceID, e.Result = payonce.JournalSucceeded, "ch_b", []byte(`{"charge_uuid":"ch_b"}`)
			return e
		}, outcome: "succeeded"},
		"a rival in doubt": {rival: func(e payonce.JournalEntry) payonce.JournalEntry { return e }, kind: payonce.ErrLookupAmbiguous},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := listServer(t, listed)
			j := journal.NewMemory()
			c := stubClient(t, srv, j)
			_, err := c.Charges.Create(t.Context(), settleCharge("47.00"), payonce.WithReference("order-1/charge"))
			require.Error(t, err)
			a, err := j.Get(t.Context(), c.Core().Scope(), "order-1/charge")
			require.NoError(t, err)
			rival := a
			rival.Reference, rival.Key, rival.Sent = "order-2/charge", "key-of-order-2-0000", true
			rival, _, err = j.Reserve(t.Context(), rival)
			require.NoError(t, err)
			if up := tc.rival(rival); up.State != payonce.JournalPending {
				require.NoError(t, j.Update(t.Context(), up))
			}

			got, err := c.Charges.SettleCreate(t.Context(), "order-1/charge", nil)
			if tc.kind != nil {
				require.ErrorIs(t, err, tc.kind)
				assert.Contains(t, err.Error(), `"order-2/charge"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.outcome, got.Entry.SettledOutcome())
			assert.Equal(t, "ch_y", got.Charge.UUID)
		})
	}
}
