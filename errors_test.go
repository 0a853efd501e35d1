package payonce

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKindForStatus(t *testing.T) {
	table := map[int]error{400: ErrInvalidRequest, 401: ErrUnauthorized, 403: ErrForbidden, 404: ErrNotFound,
		409: ErrIdempotencyConflict, 413: ErrInvalidRequest, 422: ErrInvalidRequest, 429: ErrRateLimited, 500: ErrServer, 503: ErrServer}
	for status, want := range table {
		assert.Equal(t, want, corekit.KindForStatus(status), status)
	}
}

func TestUnknownCodeKeepsRawCode(t *testing.T) {
	rec := &recorder{statuses: []int{400}, body: `{"code":400,"message":"新错误","message_key":"openapi_brand_new","data":null}`}
	c := setup(t, rec)
	_, err := c.Do(t.Context(), postReq(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "openapi_brand_new", ae.Code)
	assert.Equal(t, "新错误", ae.Message)
	assert.ErrorIs(t, err, ErrInvalidRequest, "falls back to the status")
}

func TestRateLimitedCarriesRetryAfter(t *testing.T) {
	rec := &recorder{statuses: []int{429}, header: http.Header{"Retry-After": {"1"}},
		body: `{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"slow down","details":[{"field":"client_id","reason":"100/min"}]},"request_id":"req_9"}`}
	p := fastPolicy()
	p.MaxAttempts = 1
	c := setup(t, rec, WithRetryPolicy(p))
	_, err := c.Do(t.Context(), postReq(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, ErrRateLimited)
	assert.ErrorIs(t, err, ErrRetriesExhausted)
	assert.Equal(t, time.Second, ae.RetryAfter)
	assert.Equal(t, "req_9", ae.RequestID)
	require.Len(t, ae.Details, 1)
	assert.Equal(t, "client_id", ae.Details[0].Field)
}

func TestAPIErrorFormat(t *testing.T) {
	e := &APIError{Provider: "coinepay", Operation: "cards.apply", StatusCode: 409, Code: "openapi_idempotency_key_conflict",
		Message: "Idempotency-Key 冲突", Key: testKey("k-1"), Attempts: 2, Kind: ErrIdempotencyConflict}
	assert.Equal(t, "payonce: coinepay cards.apply: idempotency key reused with a different payload (HTTP 409 openapi_idempotency_key_conflict): Idempotency-Key 冲突 [idempotency key k-1, 2 attempt(s)]", e.Error())
	wrapped := fmt.Errorf("job 9: %w", e)
	assert.ErrorIs(t, wrapped, ErrIdempotencyConflict)
	assert.Equal(t, "k-1", KeyOf(wrapped).ID())
	assert.False(t, IsTemporary(wrapped))
	cause := errors.New("dial tcp: connection refused")
	e2 := &APIError{Kind: ErrRetriesExhausted, Err: cause, Method: "POST", Path: "/x"}
	assert.ErrorIs(t, e2, cause)
	assert.True(t, strings.HasPrefix(e2.Error(), "payonce: POST /x: retries exhausted"))
	assert.True(t, IsTemporary(e2))
	assert.Equal(t, "payonce: error", (&APIError{}).Error()[:14])
}

func TestValidationError(t *testing.T) {
	_, err := ParseAmount("1.234")
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "amount", ve.Field)
	assert.Equal(t, `invalid amount: want a decimal string with at most two decimals, like "100.00"`, err.Error(), "the field the sentinel names is said once")
	assert.ErrorIs(t, err, ErrInvalidAmount)
	assert.ErrorIs(t, err, ErrInvalidRequest, "a refused amount is a kind of invalid request")
	ke := (KeyRules{Provider: "a55", MinLen: 16}).Validate("short")
	assert.ErrorIs(t, ke, ErrKeyTooShort)
	assert.ErrorIs(t, ke, ErrInvalidRequest, "a refused key is a kind of invalid request")
	card := Card{Number: "4111111111111112"}
	assert.ErrorIs(t, card.Validate(time.Now()), ErrInvalidRequest)
	other := &ValidationError{Field: "amount_total", Reason: "x", Err: ErrInvalidAmount}
	assert.Equal(t, "invalid amount: amount_total: x", other.Error(), "another field is named")
	// The kind of the operation's error, and so its journal name and
	// IsTemporary/IsResumable, stay the specific sentinel.
	assert.Equal(t, ErrInvalidAmount, errKind(err, ErrInvalidRequest))
}

func FuzzErrorDecoding(f *testing.F) {
	for _, s := range []string{
		`{"code":409,"message":"Idempotency-Key 冲突","message_key":"openapi_idempotency_key_conflict","data":null}`,
		`{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"x","details":[{"field":"a","reason":"b"}]},"request_id":"req_1"}`,
		`{"charge_uuid":"c","status":"error","message":[{"code":"CANCEL_NOT_ALLOWED","source":"charge","description":"d"}]}`,
		`{"code":"X","message":1}`, `null`, `[]`, ``, `{"error":null}`,
	} {
		f.Add(409, s)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		e := &APIError{}
		JSONCodec{}.DecodeError(status, http.Header{}, []byte(body), e)
		_ = e.Error()
		if status >= 100 && status < 1000 && corekit.KindForStatus(status) == nil {
			t.Fatal("no kind")
		}
	})
}

// The journal's kinds answer IsTemporary and IsResumable as documented.
func TestJournalKindsResumable(t *testing.T) {
	for kind, want := range map[error]bool{
		ErrJournal: true, ErrJournalLeased: true, ErrJournalFenced: true,
		ErrOutcomeUnknown: false, ErrNotExecuted: false, ErrSettledFailed: false, ErrKeyCreatedInFuture: false,
	} {
		e := &APIError{Kind: kind, Key: testKey("k-0000000000000001")}
		assert.Equal(t, want, e.Temporary(), kind.Error())
		assert.Equal(t, want, e.Resumable(), kind.Error())
		assert.Equal(t, kind, corekit.KindByName(corekit.KindName(kind)), "every kind has a stable name")
	}
}
