package a55

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
)

// codeRig is a test server that answers creates from a script (the last
// answer repeats) and charge reads with a status of its choosing, and
// records what each request carried.
type codeRig struct {
	*unit
	mu      sync.Mutex
	creates []answer // the script of creates
	keys    []string // the Idempotency-Key of each create
	bodies  []string // the body of each create
	gets    []string // the charge UUID of each read
	status  string   // the status a read answers; "" answers 500
	amount  string   // the amount a read answers; "" is the request's, 100.00
}

type answer struct {
	status int
	body   string
}

func newCodeRig(t *testing.T, opts ...payonce.Option) *codeRig {
	r := &codeRig{unit: setup(t, opts...)}
	r.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.keys = append(r.keys, req.Header.Get(corekit.HeaderIdempotencyKey))
		r.bodies = append(r.bodies, string(b))
		a := r.creates[min(len(r.keys), len(r.creates))-1]
		r.mu.Unlock()
		writeJSON(w, a.status, a.body)
	})
	read := func(w http.ResponseWriter, req *http.Request) {
		id := req.URL.Query().Get("charge_uuid")
		if id == "" {
			id = req.PathValue("id")
		}
		r.mu.Lock()
		r.gets = append(r.gets, id)
		status, amount := r.status, r.amount
		r.mu.Unlock()
		if amount == "" {
			amount = "100.00"
		}
		if status == "" {
			writeJSON(w, 500, `{"error":{"code":"INTERNAL_ERROR","message":"down"}}`)
			return
		}
		msg := `[]`
		if Status(status).Is(StatusDeclined) {
			msg = `[{"code":"05","description":"not authorized"}]`
		}
		writeJSON(w, 200, fmt.Sprintf(`{"charge_uuid":%q,"wallet_uuid":"00000000-0000-0000-0000-000000000000","description":"Order 42","status":%q,"amount":%q,"message":%s}`, id, status, amount, msg))
	}
	r.mux.HandleFunc("GET "+PathCharges, read)
	r.mux.HandleFunc("GET "+PathCharges+"{id}/", read)
	return r
}

func (r *codeRig) answer(as ...answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.creates = as
}

func (r *codeRig) readAs(status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

func (r *codeRig) readAmount(amount string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.amount = amount
}

func (r *codeRig) counts() (creates, gets int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys), len(r.gets)
}

// The shapes an answer that leaves the outcome unknown comes in, each
// naming charge c-1: both error shapes at several statuses (a 5xx
// included: never retried) and a 2xx charge in status error.
func unknownOutcomeAnswers(code string) map[string]answer {
	return map[string]answer{
		"charge-level 400": {400, `{"charge_uuid":"c-1","status":"pending","message":[{"code":"` + code + `","source":"acquirer","description":"no answer in time"}]}`},
		"charge-level 409": {409, `{"charge_uuid":"c-1","status":"error","message":[{"code":"` + code + `","source":"charge","description":"seen"}]}`},
		"general 504":      {504, `{"error":{"code":"` + code + `","message":"no answer in time"},"charge_uuid":"c-1","request_id":"req-1"}`},
		"general 409":      {409, `{"error":{"code":"` + code + `","message":"seen"},"charge_uuid":"c-1"}`},
		"2xx ERROR":        {200, `{"charge_uuid":"c-1","status":"ERROR","amount":"100.00","message":[{"code":"` + code + `","description":"no answer in time"}]}`},
	}
}

// TIMEOUT is an outcome unknown, never a final failure: nothing is sent
// again under the key; the charge the answer names is read, and its
// status decides: confirmed (or paid, or any other outcome) is the
// create's success, error or declined its failure, pending still in
// doubt (payonce.ErrOutcomeUnknown with the key and the charge), as is a
// read that fails. DUPLICATE_REQUEST reads the original charge the same
// way and gives it back as a replay.
func TestUnknownOutcomeIsLookedUpNeverSentAgain(t *testing.T) {
	for _, code := range []string{"TIMEOUT", "DUPLICATE_REQUEST", "timeout"} {
		for shape, a := range unknownOutcomeAnswers(code) {
			for _, tc := range []struct {
				read string // the status the read answers, "" a 500
				kind error  // nil: success
			}{
				{"confirmed", nil}, {"PAID", nil}, {"canceled", nil},
				{"error", ErrChargeFailed}, {"Declined", ErrCardDeclined},
				{"pending", payonce.ErrOutcomeUnknown}, {"issued", payonce.ErrOutcomeUnknown},
				{"something_new", payonce.ErrOutcomeUnknown}, {"", payonce.ErrOutcomeUnknown},
			} {
				t.Run(code+"/"+shape+"/"+tc.read, func(t *testing.T) {
					r := newCodeRig(t)
					r.answer(a)
					r.readAs(tc.read)
					ch, err := r.client.Charges.Create(context.Background(), refCharge())
					creates, gets := r.counts()
					assert.Equal(t, 1, creates, "never sent again under the key")
					if tc.read != "" {
						assert.Equal(t, 1, gets, "looked up once")
					}
					assert.GreaterOrEqual(t, gets, 1, "looked up")
					assert.Equal(t, "c-1", r.gets[0])
					replayed := code == "DUPLICATE_REQUEST"
					if tc.kind == nil {
						require.NoError(t, err)
						assert.Equal(t, "c-1", ch.UUID)
						assert.True(t, ch.Status.Is(Status(tc.read)))
						assert.Equal(t, r.keys[0], ch.Meta.Key.String())
						assert.Equal(t, replayed, ch.Meta.Replayed)
						assert.Equal(t, http.StatusOK, ch.Meta.StatusCode)
						return
					}
					require.Error(t, err)
					assert.Nil(t, ch)
					assert.ErrorIs(t, err, tc.kind)
					assert.NotErrorIs(t, err, payonce.ErrIdempotencyConflict)
					assert.Equal(t, r.keys[0], payonce.KeyOf(err).String())
					assert.False(t, payonce.IsResumable(err), "never resumed blindly")
					got, ok := ChargeFromError(err)
					require.True(t, ok)
					assert.Equal(t, "c-1", got.UUID)
					if tc.kind == payonce.ErrOutcomeUnknown {
						assert.NotErrorIs(t, err, ErrChargeFailed)
						assert.NotErrorIs(t, err, ErrCardDeclined)
						assert.NotErrorIs(t, err, payonce.ErrServer, "a failed read says nothing of the create")
					} else {
						assert.Equal(t, replayed, got.Meta.Replayed)
					}
				})
			}
		}
	}
}

// An answer that leaves the outcome unknown without naming its charge
// reads nothing and sends nothing again: payonce.ErrOutcomeUnknown with
// the key. DUPLICATE_REQUEST is then treated as TIMEOUT, never as a key
// conflict.
func TestUnknownOutcomeWithoutAChargeIsInDoubt(t *testing.T) {
	for _, a := range []answer{
		{504, `{"error":{"code":"TIMEOUT","message":"acquirer did not respond"}}`},
		{503, `{"error":{"code":"TIMEOUT","message":"acquirer did not respond"}}`},
		{409, `{"error":{"code":"DUPLICATE_REQUEST","message":"Idempotency key already used"}}`},
		{400, `{"status":"error","message":[{"code":"DUPLICATE_REQUEST","description":"Idempotency key already used"}]}`},
	} {
		r := newCodeRig(t)
		r.answer(a)
		r.readAs("confirmed")
		_, err := r.client.Charges.Create(context.Background(), refCharge())
		require.ErrorIs(t, err, payonce.ErrOutcomeUnknown, a.body)
		assert.NotErrorIs(t, err, payonce.ErrIdempotencyConflict)
		assert.NotErrorIs(t, err, ErrChargeFailed)
		assert.False(t, payonce.IsResumable(err))
		assert.Equal(t, r.keys[0], payonce.KeyOf(err).String())
		creates, gets := r.counts()
		assert.Equal(t, 1, creates, a.body)
		assert.Zero(t, gets, a.body)
	}
}

// Through a journal, a TIMEOUT whose charge is still pending leaves the
// entry pending and marked to be looked up first. A second run with the
// reference sends nothing: it reads the charge, and once that is
// confirmed records the success, which every later run answers from the
// journal without a read. A failed read, or a charge still pending,
// records nothing.
func TestTimeoutThenTheSameReferenceLooksUpInsteadOfSending(t *testing.T) {
	j := journal.NewMemory()
	r := newCodeRig(t, payonce.WithJournal(j))
	r.answer(answer{400, `{"charge_uuid":"c-1","status":"pending","message":[{"code":"TIMEOUT","description":"acquirer did not respond"}]}`})
	r.readAs("pending")
	ctx := context.Background()
	_, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-42/attempt-1"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	key := payonce.KeyOf(err).String()
	e, gerr := j.Get(ctx, r.client.core.Scope(), "order-42/attempt-1")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalPending, e.State)
	assert.True(t, e.LookUpFirst())
	assert.Equal(t, "TIMEOUT", e.ErrorCode)

	for _, read := range []string{"", "pending"} { // still in doubt: a failed read, then pending
		r.readAs(read)
		_, err = r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-42/attempt-1"))
		require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
		assert.Equal(t, key, payonce.KeyOf(err).String())
		got, ok := ChargeFromError(err)
		require.True(t, ok)
		assert.Equal(t, "c-1", got.UUID)
	}
	creates, gets := r.counts()
	assert.Equal(t, 1, creates, "nothing sent again")
	assert.Greater(t, gets, 2, "read on every run")

	r.readAs("confirmed")
	ch, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-42/attempt-1"))
	require.NoError(t, err)
	assert.Equal(t, "c-1", ch.UUID)
	assert.Equal(t, key, ch.Meta.Key.String())
	e, gerr = j.Get(ctx, r.client.core.Scope(), "order-42/attempt-1")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Contains(t, e.SettleReason, "TIMEOUT")

	ch, err = r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-42/attempt-1"))
	require.NoError(t, err)
	assert.True(t, ch.Meta.FromJournal)
	assert.Equal(t, "c-1", ch.UUID)
	assert.True(t, ch.Status.Is(StatusConfirmed))
	creates, after := r.counts()
	assert.Equal(t, 1, creates)
	assert.Equal(t, gets+1, after, "answered from the journal, not read again")
}

// A TIMEOUT whose charge is found declined settles the entry as failed
// in the same run; the next run answers the failure from the journal.
func TestTimeoutFoundDeclinedIsRecordedFailed(t *testing.T) {
	j := journal.NewMemory()
	r := newCodeRig(t, payonce.WithJournal(j))
	r.answer(answer{504, `{"error":{"code":"TIMEOUT","message":"acquirer did not respond"},"charge_uuid":"c-1"}`})
	r.readAs("declined")
	ctx := context.Background()
	_, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-43"))
	require.ErrorIs(t, err, ErrCardDeclined)
	got, ok := ChargeFromError(err)
	require.True(t, ok)
	assert.Equal(t, []string{"05"}, got.Messages.Codes())
	e, gerr := j.Get(ctx, r.client.core.Scope(), "order-43")
	require.NoError(t, gerr)
	assert.Equal(t, payonce.JournalFailed, e.State)
	_, err = r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-43"))
	require.ErrorIs(t, err, payonce.ErrSettledFailed)
	creates, gets := r.counts()
	assert.Equal(t, 1, creates)
	assert.Equal(t, 1, gets)
}

// A TIMEOUT without a charge_uuid, through a journal: later runs send
// nothing and read nothing (there is nothing to read by), and say to
// settle the entry; SettleCreate's list lookup then settles it.
func TestTimeoutWithoutAChargeWaitsForTheSettleLookup(t *testing.T) {
	j := journal.NewMemory()
	r := newCodeRig(t, payonce.WithJournal(j))
	r.answer(answer{504, `{"error":{"code":"TIMEOUT","message":"acquirer did not respond"}}`})
	ctx := context.Background()
	for range 2 {
		_, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-44"))
		require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
		assert.Contains(t, strings.ToLower(err.Error()), "settle")
		assert.False(t, payonce.IsResumable(err))
	}
	creates, gets := r.counts()
	assert.Equal(t, 1, creates)
	assert.Zero(t, gets)
}

// SettleCreate reads the charge a TIMEOUT named (the entry's recorded
// answer) instead of listing: pending stays in doubt, nothing recorded;
// confirmed records the success.
func TestSettleCreateReadsTheChargeATimeoutNamed(t *testing.T) {
	j := journal.NewMemory()
	r := newCodeRig(t, payonce.WithJournal(j))
	r.mux.HandleFunc("GET "+PathChargeList, func(w http.ResponseWriter, _ *http.Request) {
		t.Error("listed: the charge is known")
		writeJSON(w, 500, `{}`)
	})
	r.answer(answer{400, `{"charge_uuid":"c-1","status":"pending","message":[{"code":"TIMEOUT"}]}`})
	r.readAs("pending")
	ctx := context.Background()
	_, err := r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-45"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)

	_, err = r.client.Charges.SettleCreate(ctx, "order-45", nil)
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.Contains(t, err.Error(), "c-1")
	r.readAs("paid")
	res, err := r.client.Charges.SettleCreate(ctx, "order-45", nil)
	require.NoError(t, err)
	assert.True(t, res.Recorded)
	assert.Equal(t, payonce.JournalSucceeded, res.Entry.State)
	assert.Equal(t, "c-1", res.Charge.UUID)
	creates, gets := r.counts()
	assert.Equal(t, 1, creates)
	assert.Equal(t, 3, gets)
}

// The charge read must be this request's. DUPLICATE_REQUEST naming a
// charge another request created is a key conflict, final; a TIMEOUT
// naming one that does not match stays in doubt, nothing recorded, and
// SettleCreate refuses it too.
func TestLookedUpChargeMustMatchTheRequest(t *testing.T) {
	r := newCodeRig(t)
	r.answer(answer{409, `{"error":{"code":"DUPLICATE_REQUEST","message":"Idempotency key already used"},"charge_uuid":"c-1"}`})
	r.readAs("confirmed")
	r.readAmount("250.00")
	_, err := r.client.Charges.Create(context.Background(), refCharge())
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.NotErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.False(t, payonce.IsResumable(err))
	_, ok := ChargeFromError(err)
	assert.False(t, ok, "another request's charge is not given back")

	j := journal.NewMemory()
	r = newCodeRig(t, payonce.WithJournal(j))
	r.answer(answer{400, `{"charge_uuid":"c-1","status":"pending","message":[{"code":"TIMEOUT"}]}`})
	r.readAs("confirmed")
	r.readAmount("250.00")
	ctx := context.Background()
	_, err = r.client.Charges.Create(ctx, refCharge(), payonce.WithReference("order-48"))
	require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.Contains(t, err.Error(), "does not match")
	e, gerr := j.Get(ctx, r.client.core.Scope(), "order-48")
	require.NoError(t, gerr)
	assert.True(t, e.LookUpFirst(), "nothing recorded")
	_, err = r.client.Charges.SettleCreate(ctx, "order-48", nil)
	require.ErrorIs(t, err, payonce.ErrLookupAmbiguous)
	creates, _ := r.counts()
	assert.Equal(t, 1, creates)
}

// A refund answered TIMEOUT, even as a 504, is in doubt: never sent
// again under its key, not resumable, the journal entry marked to be
// looked up first (no typed lookup settles a refund: Client.Settle does).
func TestRefundAnsweredTimeoutIsInDoubt(t *testing.T) {
	j := journal.NewMemory()
	u := setup(t, payonce.WithJournal(j))
	var n int
	var mu sync.Mutex
	u.mux.HandleFunc("POST /", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		writeJSON(w, 504, `{"error":{"code":"TIMEOUT","message":"acquirer did not respond"},"charge_uuid":"c-1"}`)
	})
	ctx := context.Background()
	for range 2 {
		_, err := u.client.Charges.Refund(ctx, &RefundRequest{ChargeUUID: "c-1", WalletUUID: "w-1"}, payonce.WithReference("refund-1"))
		require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
		assert.False(t, payonce.IsResumable(err))
	}
	mu.Lock()
	assert.Equal(t, 1, n)
	mu.Unlock()
	e, err := j.Get(ctx, u.client.core.Scope(), "refund-1")
	require.NoError(t, err)
	assert.True(t, e.LookUpFirst())
}
