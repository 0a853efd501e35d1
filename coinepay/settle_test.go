package coinepay_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settleClient is a client of srv on j that sends each operation once.
func settleClient(t *testing.T, srv *coinepaytest.Server, j payonce.Journal) *coinepay.Client {
	t.Helper()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(p), payonce.WithSigner(srv.Signer()))
	require.NoError(t, err)
	return c
}

// An apply whose answer was lost is in doubt once its key is past the
// window; the lookup finds the card among others of the same header and
// package (by the key the fake reports), records it, the next call answers
// from the journal and the ledger shows one card issued.
func TestSettleApplyFindsTheCardOfALostAnswer(t *testing.T) {
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	c := settleClient(t, srv, j)
	ctx := t.Context()
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err := c.Cards.Apply(ctx, req, payonce.WithReference("job-0/apply"))
	require.NoError(t, err, "another card of the same header and package")
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = c.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.Error(t, err)
	key := payonce.KeyOf(err).String()
	srv.Clock().Advance(25 * time.Hour)
	_, err = c.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)

	got, err := c.Cards.SettleApply(ctx, "job-1/apply", req, nil)
	require.NoError(t, err)
	assert.Equal(t, "succeeded", got.Entry.SettledOutcome())
	ran := srv.Ledger().ByKey(key)
	require.Len(t, ran, 1)
	assert.Equal(t, ran[0].ID, got.Card.CardID)

	sent := srv.Stats().Requests
	again, err := c.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err)
	assert.True(t, again.Meta.FromJournal)
	assert.Equal(t, ran[0].ID, again.CardID)
	assert.Equal(t, sent, srv.Stats().Requests)
	assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "one card per reference")
}

// An apply that never ran is not found: payonce.ErrLookupNotFound with the key,
// or, with RecordNotExecuted once the window is over, not executed.
func TestSettleApplyNotFound(t *testing.T) {
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	c := settleClient(t, srv, j)
	ctx := t.Context()
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err := c.Cards.Apply(ctx, req, payonce.WithReference("job-2/apply"))
	require.Error(t, err)
	key := payonce.KeyOf(err).String()
	srv.Clock().Advance(25 * time.Hour)
	_, err = c.Cards.SettleApply(ctx, "job-2/apply", req, nil)
	require.ErrorIs(t, err, payonce.ErrLookupNotFound)
	assert.Equal(t, key, payonce.KeyOf(err).String())

	got, err := c.Cards.SettleApply(ctx, "job-2/apply", req, &coinepay.SettleOptions{RecordNotExecuted: true})
	require.NoError(t, err)
	assert.Equal(t, "not_executed", got.Entry.SettledOutcome())
	_, err = c.Cards.Apply(ctx, req, payonce.WithReference("job-2/apply"))
	require.ErrorIs(t, err, payonce.ErrNotExecuted)
	assert.Zero(t, srv.Ledger().CountKind("card.apply"))

	again, err := c.Cards.SettleApply(ctx, "job-2/apply", req, nil)
	require.NoError(t, err)
	assert.False(t, again.Recorded, "no card found: the recorded outcome stands")
	assert.Equal(t, "not_executed", again.Entry.SettledOutcome())
}

// Against a server whose cards carry no key, as Coinepay's do, two cards
// of the request's header and package in the window are ambiguous:
// nothing is recorded and the entry stays pending.
func TestSettleApplyNeverGuesses(t *testing.T) {
	now := time.Now().UTC().Format(time.RFC3339)
	cards := []map[string]any{
		{"card_id": "card_1", "header_id": "hdr_1", "package_id": "pkg_basic", "created_at": now},
		{"card_id": "card_2", "header_id": "hdr_1", "package_id": "pkg_basic", "created_at": now},
		{"card_id": "card_3", "header_id": "hdr_9", "package_id": "pkg_basic", "created_at": now},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"code": 200, "message": "ok", "data": map[string]any{"items": cards, "total": len(cards), "page": 1, "page_size": 50}})
	}))
	t.Cleanup(srv.Close)
	j := journal.NewMemory()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithJournal(j), payonce.WithRetryPolicy(p))
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-3/apply"))
	require.Error(t, err)
	key := payonce.KeyOf(err).String()

	_, err = c.Cards.SettleApply(t.Context(), "job-3/apply", req, nil)
	require.ErrorIs(t, err, payonce.ErrLookupAmbiguous)
	assert.Equal(t, key, payonce.KeyOf(err).String())
	assert.Contains(t, err.Error(), "card_1")
	e, gerr := j.Get(t.Context(), c.Core().Scope(), "job-3/apply")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State)

	got, err := c.Cards.SettleApply(t.Context(), "job-3/apply", req, nil)
	require.ErrorIs(t, err, payonce.ErrLookupAmbiguous, "asking again does not pick one")
	assert.Nil(t, got)
}

// A card issued while the provider's clock ran 30 days ahead of the
// journal's lies outside the window; its key still makes it the entry's,
// so the lookup records the success, never "not executed".
func TestSettleApplyFindsTheCardByItsKeyWhateverTheClocks(t *testing.T) {
	srv := coinepaytest.New(t)
	clientClock := payoncetest.NewClock()
	p := fastPolicy()
	p.MaxAttempts = 1
	c, err := srv.Client(payonce.WithJournal(journal.NewMemory()), payonce.WithRetryPolicy(p), payonce.WithSigner(srv.Signer()),
		payoncetest.ClientClock(clientClock.Now))
	require.NoError(t, err)
	srv.Clock().Advance(30 * 24 * time.Hour)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-4/apply"))
	require.Error(t, err)
	key := payonce.KeyOf(err).String()
	clientClock.Advance(26 * time.Hour)

	got, err := c.Cards.SettleApply(t.Context(), "job-4/apply", req, &coinepay.SettleOptions{RecordNotExecuted: true})
	require.NoError(t, err)
	assert.Equal(t, "succeeded", got.Entry.SettledOutcome())
	assert.Equal(t, srv.Ledger().ByKey(key)[0].ID, got.Card.CardID)
}

// noFinder is a journal without payonce.JournalFinder, as a third
// party's may be.
type noFinder struct{ payonce.Journal }

// Through such a journal a lookup refuses before it reads any card.
func TestSettleApplyRefusesAJournalWithoutAFinder(t *testing.T) {
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err := settleClient(t, srv, j).Cards.Apply(t.Context(), req, payonce.WithReference("job-1/apply"))
	require.Error(t, err)
	c := settleClient(t, srv, noFinder{j})
	sent := srv.Stats().Requests
	_, err = c.Cards.SettleApply(t.Context(), "job-1/apply", req, nil)
	require.ErrorIs(t, err, payonce.ErrLookupUnsupported)
	assert.Equal(t, sent, srv.Stats().Requests, "no card read")
}

// Answers without keys, as Coinepay's: two jobs applied for one header
// and package and both cards were issued; job A's answer was lost, job
// B's was recorded. A's lookup finds both cards: B's is B's outcome, so
// A's is the other. A job in doubt for another header is no rival.
func TestSettleApplyTellsIdenticalAppliesApartByWhatTheJournalHolds(t *testing.T) {
	srv := coinepaytest.New(t, payoncetest.WithDocumentedAnswers())
	j := journal.NewMemory()
	c := settleClient(t, srv, j)
	ctx := t.Context()
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err := c.Cards.Apply(ctx, req, payonce.WithReference("job-A/apply"))
	require.Error(t, err)
	keyA := payonce.KeyOf(err).String()
	b, err := c.Cards.Apply(ctx, req, payonce.WithReference("job-B/apply"))
	require.NoError(t, err)
	other := &coinepay.ApplyRequest{HeaderID: "hdr_2", PackageID: "pkg_basic"}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = c.Cards.Apply(ctx, other, payonce.WithReference("job-C/apply"))
	require.Error(t, err)
	srv.Clock().Advance(25 * time.Hour)

	got, err := c.Cards.SettleApply(ctx, "job-A/apply", req, nil)
	require.NoError(t, err)
	require.Equal(t, "succeeded", got.Entry.SettledOutcome())
	ran := srv.Ledger().ByKey(keyA)
	require.Len(t, ran, 1)
	assert.Equal(t, ran[0].ID, got.Card.CardID)
	assert.NotEqual(t, b.CardID, got.Card.CardID)
	assert.Contains(t, got.Entry.SettleReason, `"job-B/apply"`, "the reason names the card left out")
}

// Cards.Apply stores its header and package as the entry's summary and
// the card as what the operation made.
func TestApplyRecordsItsSummaryAndItsCard(t *testing.T) {
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	c := settleClient(t, srv, j)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	res, err := c.Cards.Apply(t.Context(), req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err)
	e, err := j.Get(t.Context(), c.Core().Scope(), "job-1/apply")
	require.NoError(t, err)
	assert.JSONEq(t, `{"header_id":"hdr_1","package_id":"pkg_basic"}`, e.Summary)
	assert.Equal(t, req.JournalSummary(), e.Summary)
	assert.Equal(t, res.CardID, e.ResourceID)
	var nilReq *coinepay.ApplyRequest
	assert.Empty(t, nilReq.JournalSummary())
}

// cardListServer answers card/list with cards and every apply with a 503,
// as a server where nothing the client sends executes.
func cardListServer(t *testing.T, cards []map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"code": 200, "message": "ok", "data": map[string]any{"items": cards, "total": len(cards), "page": 1, "page_size": 50}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A card the lookup cannot place in time (no created_at, or one that is
// not RFC 3339) may be the card of any apply of its header and package:
// one purged from the journal, one years old, one made outside it. Job
// 3's apply never executed; the only card is such a card. The lookup
// refuses rather than record job 3 as paid with it.
func TestSettleApplyNeverTakesACardItCannotPlaceInTime(t *testing.T) {
	for name, card := range map[string]map[string]any{
		"no created_at":       {"card_id": "card_old", "header_id": "hdr_1", "package_id": "pkg_basic", "status": "active"},
		"created_at not 3339": {"card_id": "card_old", "header_id": "hdr_1", "package_id": "pkg_basic", "status": "active", "created_at": "2020-01-01 10:00:00"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := cardListServer(t, []map[string]any{card})
			j := journal.NewMemory()
			p := fastPolicy()
			p.MaxAttempts = 1
			c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithJournal(j), payonce.WithRetryPolicy(p))
			require.NoError(t, err)
			req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
			_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-3/apply"))
			require.Error(t, err)
			key := payonce.KeyOf(err).String()

			got, err := c.Cards.SettleApply(t.Context(), "job-3/apply", req, &coinepay.SettleOptions{RecordNotExecuted: true})
			require.ErrorIs(t, err, payonce.ErrLookupAmbiguous)
			assert.Nil(t, got)
			assert.Equal(t, key, payonce.KeyOf(err).String())
			assert.Contains(t, err.Error(), "card_old")
			e, gerr := j.Get(t.Context(), c.Core().Scope(), "job-3/apply")
			require.NoError(t, gerr)
			assert.Equal(t, payonce.JournalPending, e.State, "nothing recorded")
			assert.Empty(t, e.ResourceID)
		})
	}
}

// A card whose status says its apply failed (failed, rejected or error,
// in any case: the rule reconcile reads Coinepay's cards by) is no card
// issued: the lookup records the apply failed, never succeeded with it.
func TestSettleApplyNeverRecordsAFailedCardAsASuccess(t *testing.T) {
	for _, status := range []string{"FAILED", "Rejected", "error"} {
		t.Run(status, func(t *testing.T) {
			card := map[string]any{"card_id": "card_f", "header_id": "hdr_1", "package_id": "pkg_basic", "status": status,
				"created_at": time.Now().UTC().Format(time.RFC3339)}
			srv := cardListServer(t, []map[string]any{card})
			j := journal.NewMemory()
			p := fastPolicy()
			p.MaxAttempts = 1
			c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithJournal(j), payonce.WithRetryPolicy(p))
			require.NoError(t, err)
			req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
			_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-4/apply"))
			require.Error(t, err)

			got, err := c.Cards.SettleApply(t.Context(), "job-4/apply", req, nil)
			require.NoError(t, err)
			assert.Equal(t, "failed", got.Entry.SettledOutcome(), got.Entry.SettleReason)
			assert.Nil(t, got.Card, "no card issued")
			assert.Contains(t, got.Entry.SettleReason, "card_f")
			_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-4/apply"))
			require.ErrorIs(t, err, payonce.ErrSettledFailed)
		})
	}
}

// A list that repeats its first page hides the cards past it: a lookup
// that read it must not conclude that no card matches (not executed,
// which lets the job apply again under a new reference).
func TestSettleApplyNeverConcludesFromAListItCouldNotRead(t *testing.T) {
	now := time.Now().UTC().Format(time.RFC3339)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		cards := []map[string]any{{"card_id": "card_other", "header_id": "hdr_9", "package_id": "pkg_basic", "created_at": now}}
		_ = json.NewEncoder(w).Encode(map[string]any{"code": 200, "message": "ok", "data": map[string]any{"items": cards, "total": 5, "page": 1, "page_size": 1}})
	}))
	t.Cleanup(srv.Close)
	j := journal.NewMemory()
	p := fastPolicy()
	p.MaxAttempts = 1
	clock := payoncetest.NewClock()
	c, err := coinepay.NewClient(testAPIKey, testSecret, payonce.WithBaseURL(srv.URL), payonce.WithJournal(j), payonce.WithRetryPolicy(p),
		payoncetest.ClientClock(clock.Now))
	require.NoError(t, err)
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}
	_, err = c.Cards.Apply(t.Context(), req, payonce.WithReference("job-5/apply"))
	require.Error(t, err)
	clock.Advance(25 * time.Hour)

	_, err = c.Cards.SettleApply(t.Context(), "job-5/apply", req, &coinepay.SettleOptions{RecordNotExecuted: true})
	require.ErrorIs(t, err, payonce.ErrMalformedResponse)
	e, gerr := j.Get(t.Context(), c.Core().Scope(), "job-5/apply")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State, "nothing recorded")
}
