package payonce_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/redact"
)

// rowText is every stored column of an entry, as one string.
func rowText(t *testing.T, e payonce.JournalEntry) string {
	t.Helper()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return string(b) + string(e.Result)
}

// A hostile server names the CVV with a prefix or suffix ("card_cvv",
// "cardCvc", "cvv_code", "card_pin") and writes the card number as a JSON
// number in any notation: no row keeps them, in the result or in the
// error text.
func TestJournalRowHoldsNoPrefixedSecretOrNumberInOtherNotation(t *testing.T) {
	const success = `{"id":"ch_1","status":"confirmed","api_key":"ak_hostile_42","X-Api-Key":"ak_hostile_42","card_cvv":"987","cardCvc":"987","cvv_code":"987","card_pin":"987",` +
		`"e":4.111111111111111e15,"E":4111111111111111E0,"neg":-4111111111111111,"f":4111111111111111.0,"amount":100.5,"big":12345678901234567890123}`
	s := newStub(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(corekit.HeaderIdempotencyKey) == "hostile-400-key-0001" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":"INVALID","message":"refused card_cvv=987, cardCvc: 987 and card_pin='987'"}}`)
			return
		}
		_, _ = io.WriteString(w, success)
	})
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	ctx := t.Context()
	var out map[string]any
	_, err := c.Do(ctx, chargeReq("10.00"), &out, payonce.WithReference("ok"), payonce.WithKey(keytest.Key(t, "hostile-ok-key-0001", newClock().Now())))
	require.NoError(t, err)
	_, err = c.Do(ctx, chargeReq("10.00"), nil, payonce.WithReference("bad"), payonce.WithKey(keytest.Key(t, "hostile-400-key-0001", newClock().Now())))
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)

	for _, ref := range []string{"ok", "bad"} {
		e, err := j.Get(ctx, "a55:client-1", ref)
		require.NoError(t, err)
		row := rowText(t, e)
		// The CVV in each context the answers gave it: a bare "987" may
		// stand in a timestamp or the fingerprint's hex.
		for _, cvv := range []string{`"987"`, "=987", ": 987", "'987'"} {
			assert.NotContains(t, row, cvv, ref)
		}
		assert.NotRegexp(t, `4\.?111111111111111`, row, ref)
		assert.NotContains(t, row, "ak_hostile_42", ref)
	}
	ok, err := j.Get(ctx, "a55:client-1", "ok")
	require.NoError(t, err)
	// What is not a card number passes through unchanged.
	assert.Contains(t, string(ok.Result), `"amount":100.5`)
	assert.Contains(t, string(ok.Result), `"big":12345678901234567890123`)
}

// A path carrying a secret or a card number (a raw Do with a query glued to
// its path, an ID that is a card number) does not put it in the row: the
// stored path is redacted like every other stored text.
func TestJournalRowPathHoldsNoSecret(t *testing.T) {
	s := newStub(t, okCharge)
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	for i, p := range []string{"/charge/?access_token=tok_in_path_1", "/cards/4111111111111111/charge", "/charge;cvv=987"} {
		req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: p, Body: map[string]string{"amount": "1.00"}, Keyed: true}
		// A fixed key: a random UUID may itself hold the digits "987".
		_, _ = c.Do(t.Context(), req, nil, payonce.WithReference(fmt.Sprintf("path-%d", i)), payonce.WithKey(keytest.Key(t, fmt.Sprintf("path-key-%04d-abcdef", i), newClock().Now())))
		e, err := j.Get(t.Context(), "a55:client-1", fmt.Sprintf("path-%d", i))
		require.NoError(t, err)
		row := rowText(t, e)
		assert.NotContains(t, row, "tok_in_path_1")
		assert.NotContains(t, row, "4111111111111111")
		assert.NotContains(t, row, "cvv=987") // bare "987" may stand in a timestamp
	}
}

// A request ID a hostile server fills with a card number or a secret does
// not reach the row.
func TestJournalRowRequestIDHoldsNoSecret(t *testing.T) {
	for i, rid := range []string{"4111111111111111", "req cvv=987", "access_token=tok_in_reqid_1"} {
		s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Request-Id", rid)
			_, _ = io.WriteString(w, `{"id":"ch_1","status":"confirmed"}`)
		})
		j := journal.NewMemory()
		c := journalClient(t, s, j, newClock())
		// A fixed key: a random UUID may itself hold the digits "987".
		_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference(fmt.Sprintf("rid-%d", i)), payonce.WithKey(keytest.Key(t, fmt.Sprintf("rid-key-%04d-abcdef", i), newClock().Now())))
		require.NoError(t, err)
		e, err := j.Get(t.Context(), "a55:client-1", fmt.Sprintf("rid-%d", i))
		require.NoError(t, err)
		row := rowText(t, e)
		assert.NotContains(t, row, "4111111111111111")
		assert.NotContains(t, row, "cvv=987") // bare "987" may stand in a timestamp's nanoseconds
		assert.NotContains(t, row, "tok_in_reqid_1")
	}
}

// An entry that failed temporarily and then succeeded keeps no error of
// the earlier run: a succeeded row names no error kind, code or message.
func TestJournalSucceededAfterAFailureKeepsNoStaleError(t *testing.T) {
	fail := true
	s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"code":"DOWN","message":"maintenance"}}`)
			return
		}
		okCharge(n, w, r)
	})
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock())
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("stale"))
	require.Error(t, err)
	fail = false
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("stale"))
	require.NoError(t, err)
	e, err := j.Get(t.Context(), "a55:client-1", "stale")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State)
	assert.Empty(t, e.ErrorKind)
	assert.Empty(t, e.ErrorCode)
	assert.Empty(t, e.ErrorMessage)
}

// A hostile server puts a token, a query string, URL credentials or a
// named secret in an identifier field (id, charge_id, request_id), or
// writes a card number as escaped digits ("\\u0034\\u0031...", JSON
// quoted in JSON) in a text, a code or a message: the SQLite row, read
// with SQL, holds none of them.
func TestJournalSQLRowHoldsNoSecretInIDOrEscapedDigits(t *testing.T) {
	esc := `\\u0034\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031`
	bodies := []struct {
		status int
		body   string
	}{
		{200, `{"id":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl","status":"confirmed"}`},
		{200, `{"id":"ch_1?access_token=tok_probe_1","status":"confirmed"}`},
		{200, `{"charge_id":"https://u:pw_probe@x.example/","status":"confirmed"}`},
		{200, `{"request_id":"cvv=987","status":"confirmed"}`},
		{200, `{"id":"ch_1","note":"pan ` + esc + `"}`},
		{400, `{"error":{"code":"INVALID","message":"pan ` + esc + `"}}`},
		{400, `{"error":{"code":"` + esc + `","message":"bad"}}`},
		{200, `{"id":"ch_1","note":"\u0034\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031"}`},
		{200, `{"id":"ch_NDExMTExMTExMTExMTExMQ","note":"%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31"}`},
		{200, `{"id":"ch_1","digits":[4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"note":"&#52;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;"}`},
		{400, `{"error":{"code":"NDExMTExMTExMTExMTExMQ==","message":"body eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIn0"}}`},
		{400, `{"error":{"code":"4111|1111|1111|1111","message":"pan 4111:1111:1111:1111"}}`},
	}
	for i, b := range bodies {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel() // each opens and syncs a SQLite file of its own
			s := newStub(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(b.status)
				_, _ = io.WriteString(w, b.body)
			})
			j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "j.db"))
			require.NoError(t, err)
			defer j.Close()
			c := journalClient(t, s, j, newClock())
			_, _ = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("r"), payonce.WithKey(keytest.Key(t, "sqlrow-key-0001-abcdef", newClock().Now())))
			var row string
			require.NoError(t, j.DB().QueryRowContext(t.Context(), `SELECT path||'|'||CAST(COALESCE(result,'') AS TEXT)||'|'||request_id||'|'||error_code||'|'||error_message||'|'||last_cause FROM payonce_journal`).Scan(&row))
			for _, n := range []string{"eyJzdWIi", "tok_probe_1", "pw_probe", "987", `u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031\\u0031`, "411111111111",
				"%34%31%31%31", "NDExMTExMTEx", "&#52;&#49;", "1,1,1,1,1", "eyJudW1iZXIi", "4111|1111", "4111:1111"} {
				assert.NotContains(t, strings.ReplaceAll(row, `\\`, `\`), strings.ReplaceAll(n, `\\`, `\`))
			}
		})
	}
}

// A run's attempt is in flight when a second run of the same reference
// takes the entry, gets a refusal the table calls final and records
// failed; then the first attempt's 201 arrives (the provider ran it). The
// 2xx wins: the run that got it returns the charge, the journal records
// it, and every later call answers it from the journal.
func TestSuccessArrivingAfterARecordedFailureWins(t *testing.T) {
	j := journal.NewMemory()
	clk := newClock()
	var s *stub
	var c *payonce.Client
	var bErr error
	s = newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			// While A's attempt is at the provider, B runs the same
			// reference and is refused.
			_, bErr = c.Do(context.Background(), chargeReq("10.00"), nil, payonce.WithReference("order-p1"))
			okCharge(n, w, r)
		default:
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"error":{"code":"VALIDATION_ERROR","message":"try later"}}`)
		}
	})
	c = journalClient(t, s, j, clk)
	var out chargeOut
	meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("order-p1"))
	require.NoError(t, err, "the caller whose attempt got the 2xx gets the success")
	assert.Equal(t, "ch_1", out.ID)
	assert.False(t, meta.FromJournal)
	// B took over an entry A may have sent under: its refusal is not the
	// outcome (A's attempt may still run, and here it does).
	require.ErrorIs(t, bErr, payonce.ErrOutcomeUnknown, "B's refusal is not final while A's attempt may run")
	assert.NotErrorIs(t, bErr, payonce.ErrInvalidRequest)
	assert.Contains(t, bErr.Error(), "VALIDATION_ERROR", "B's refusal is named")

	e, err := j.Get(t.Context(), "a55:client-1", "order-p1")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalSucceeded, e.State, "the journal says what the provider did")

	var again chargeOut
	m2, err := c.Do(t.Context(), chargeReq("10.00"), &again, payonce.WithReference("order-p1"))
	require.NoError(t, err)
	assert.True(t, m2.FromJournal)
	assert.Equal(t, "ch_1", again.ID)
	assert.Equal(t, int32(2), s.calls.Load())
}

// A 4xx that the provider does not keep and a later same-key attempt may
// turn into success (an insufficient balance, refused permissions, a
// conflict) leaves the entry pending; a deterministic refusal of the body
// is recorded failed.
func TestOnlyFailuresFinalForTheKeyAreRecordedFailed(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   payonce.JournalState
	}{
		{http.StatusBadRequest, `{"message_key":"insufficient_balance"}`, payonce.JournalPending},
		{http.StatusForbidden, `{"error":{"code":"FORBIDDEN"}}`, payonce.JournalPending},
		{http.StatusConflict, `{"message_key":"openapi_idempotency_answer_not_kept"}`, payonce.JournalPending},
		{http.StatusUnauthorized, `{"message_key":"openapi_signature_invalid"}`, payonce.JournalPending},
		{http.StatusBadRequest, `{"error":{"code":"VALIDATION_ERROR"}}`, payonce.JournalFailed},
		{http.StatusNotFound, `{"error":{"code":"NOT_FOUND"}}`, payonce.JournalFailed},
		{http.StatusPaymentRequired, `{"error":{"code":"CARD_DECLINED"}}`, payonce.JournalFailed},
	} {
		t.Run(tc.body, func(t *testing.T) {
			j, _, c := answeringClient(t, tc.status, tc.body)
			_, err := c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-p2"))
			require.Error(t, err)
			e, err := j.Get(t.Context(), "a55:client-1", "order-p2")
			require.NoError(t, err)
			assert.Equal(t, tc.want, e.State)
		})
	}
}

// A redelivery that takes over an entry an earlier run may have sent under
// (that run crashed or stalled after its check) and is then refused with
// a failure final for the key neither records failed nor tells its caller
// "declined": the earlier attempt may still execute. The entry stays
// pending and the caller gets ErrOutcomeUnknown with the refusal's text.
func TestTakeOverRefusedFinallyIsNotTheOutcome(t *testing.T) {
	clk := newClock()
	j := journal.NewMemory().WithClock(clk.Now)
	s := newStub(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, `{"error":{"code":"CARD_DECLINED","message":"declined by the issuer"}}`)
	})
	c := journalClient(t, s, j, clk)
	// The first worker reserved the entry and may have sent its attempt,
	// then died: its lease runs out.
	first := payonce.JournalEntry{Scope: "a55:client-1", Reference: "order-p9", Operation: "charges.create",
		Method: http.MethodPost, Path: "/charge/", Key: "inherited-key-0123456789", KeyCreated: clk.Now(),
		Fingerprint: c.Fingerprint(http.MethodPost, "/charge/", []byte(`{"amount":"1.00"}`)),
		State:       payonce.JournalPending, LeaseOwner: "worker-1", Sent: true, Attempts: 1, Lease: time.Minute}
	_, created, err := j.Reserve(t.Context(), first)
	require.NoError(t, err)
	require.True(t, created)
	clk.Advance(2 * time.Minute)

	_, err = c.Do(t.Context(), chargeReq("1.00"), nil, payonce.WithReference("order-p9"))
	require.Error(t, err)
	assert.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
	assert.NotErrorIs(t, err, a55.ErrCardDeclined, "the caller must not read 'nothing charged'")
	assert.Equal(t, "inherited-key-0123456789", payonce.KeyOf(err).String())
	assert.Contains(t, err.Error(), "CARD_DECLINED", "the refusal's text stays")
	assert.Equal(t, int32(1), s.calls.Load())
	e, err := j.Get(t.Context(), "a55:client-1", "order-p9")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State, "never failed while an earlier attempt may run")
	assert.Contains(t, e.LastCause, "earlier run's attempt may still execute")
}

// fieldsCodec is providerCodec naming the identifiers and the card data
// of its answers, as the providers' codecs do.
type fieldsCodec struct{ providerCodec }

func (fieldsCodec) AnswerFields() *redact.Fields {
	return redact.NewFields([]string{"id", "card_id"}, []string{"card_number"})
}

// An identifier the codec names comes back from the journal as the
// provider sent it, a JSON integer included, when the run recorded it and
// when Settle did; card data it names is masked even when it fails the
// Luhn check.
func TestJournalKeepsTheIdentifiersTheCodecNames(t *testing.T) {
	const answer = `{"id":4111111111111111,"card_id":"4000056655665556","card_number":"4111111111111112","note":"4111111111111111"}`
	var s *stub
	s = newStub(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		body := s.bodies[n-1]
		s.mu.Unlock()
		if strings.Contains(body, "20.00") {
			w.WriteHeader(http.StatusServiceUnavailable) // left pending, settled by hand below
			return
		}
		_, _ = io.WriteString(w, answer)
	})
	j := journal.NewMemory()
	c := journalClient(t, s, j, newClock(), payonce.WithTestCodec(fieldsCodec{}))
	type card struct {
		ID     json.Number `json:"id"`
		CardID string      `json:"card_id"`
	}
	want := card{ID: "4111111111111111", CardID: "4000056655665556"}
	var first, again card
	_, err := c.Do(t.Context(), chargeReq("10.00"), &first, payonce.WithReference("card-1"))
	require.NoError(t, err)
	require.Equal(t, want, first)
	m, err := c.Do(t.Context(), chargeReq("10.00"), &again, payonce.WithReference("card-1"))
	require.NoError(t, err)
	require.True(t, m.FromJournal)
	assert.Equal(t, want, again, "recorded by the run")

	_, err = c.Do(t.Context(), chargeReq("20.00"), nil, payonce.WithReference("card-2"))
	require.Error(t, err)
	_, err = c.Settle(t.Context(), "card-2", payonce.Settlement{State: payonce.JournalSucceeded, Result: []byte(answer), StatusCode: 200, Reason: "looked up"})
	require.NoError(t, err)
	var settled card
	m, err = c.Do(t.Context(), chargeReq("20.00"), &settled, payonce.WithReference("card-2"))
	require.NoError(t, err)
	require.True(t, m.FromJournal)
	assert.Equal(t, want, settled, "recorded by Settle")

	for _, ref := range []string{"card-1", "card-2"} {
		e, err := j.Get(t.Context(), "a55:client-1", ref)
		require.NoError(t, err)
		assert.NotContains(t, string(e.Result), "4111111111111112", ref)
		assert.Contains(t, string(e.Result), `"note":"************1111"`, ref)
	}
}

// failingLimiter refuses every wait: the run ends before its first byte.
type failingLimiter struct{}

func (failingLimiter) Wait(context.Context) error { return errors.New("limiter closed") }

// A run that ends before any byte of any attempt left (its limiter
// refused, after the reservation marked the entry) leaves the entry
// pending and never sent, never "may have been sent"; the next run
// resumes it with its key.
func TestJournalRunEndedBeforeAnyByteIsNeverSent(t *testing.T) {
	s := newStub(t, okCharge)
	j := journal.NewMemory()
	clk := newClock()
	_, err := journalClient(t, s, j, clk, payonce.WithLimiter(failingLimiter{})).Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("o-1"))
	require.Error(t, err)
	e, err := j.Get(t.Context(), "a55:client-1", "o-1")
	require.NoError(t, err)
	assert.Equal(t, payonce.JournalPending, e.State)
	assert.False(t, e.Sent)
	assert.Zero(t, e.Attempts)
	assert.Zero(t, s.calls.Load())

	var out chargeOut
	_, err = journalClient(t, s, j, clk).Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("o-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{e.Key}, s.sentKeys(), "resumed with the reserved key")
}
