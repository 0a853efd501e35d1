package payonce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKindForStatus(t *testing.T) {
	table := map[int]error{400: ErrInvalidRequest, 401: ErrUnauthorized, 403: ErrForbidden, 404: ErrNotFound,
		409: ErrIdempotencyConflict, 413: ErrInvalidRequest, 422: ErrInvalidRequest, 429: ErrRateLimited, 500: ErrServer, 503: ErrServer}
	for status, want := range table {
		assert.Equal(t, want, KindForStatus(status), status)
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
	assert.Equal(t, "k-1", KeyOf(wrapped).String())
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
	ke := validateKey(KeyRules{Provider: "a55", MinLen: 16}, "short")
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
		jsonCodec{}.DecodeError(status, http.Header{}, []byte(body), e)
		_ = e.Error()
		if status >= 100 && status < 1000 && KindForStatus(status) == nil {
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
		assert.Equal(t, want, e.temporary(), kind.Error())
		assert.Equal(t, want, e.resumable(), kind.Error())
		assert.Equal(t, kind, (&Client{}).kindByName(KindName(kind)), "every kind has a stable name")
	}
}

func TestIsResumable(t *testing.T) {
	k := "k-0123456789abcdef"
	cases := []struct {
		err       *APIError
		resumable bool
		temporary bool
	}{
		{&APIError{Key: testKey(k), Kind: ErrRetriesExhausted, Err: ErrServer}, true, true},
		{&APIError{Key: testKey(k), Kind: ErrTransport}, true, true},
		{&APIError{Key: testKey(k), Kind: ErrRateLimited, StatusCode: 429}, true, true},
		{&APIError{Key: testKey(k), Kind: ErrRetryBudgetExhausted}, true, true},
		{&APIError{Key: testKey(k), Kind: context.Canceled}, true, true},
		{&APIError{Key: testKey(k), Kind: context.DeadlineExceeded}, true, true},
		{&APIError{Key: testKey(k), Kind: testErrInsufficientBalance, StatusCode: 402}, true, false},
		{&APIError{Key: testKey(k), Kind: ErrIdempotencyConflict, StatusCode: 409}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrInvalidCard, Err: invalid(ErrInvalidCard, "card.number", "x")}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrInvalidRequest, StatusCode: 422}, false, false},
		{&APIError{Key: testKey(k), Kind: testErrCardDeclined, StatusCode: 402}, false, false},
		{&APIError{Key: testKey(k), Kind: testErrChargeFailed}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrUnauthorized, StatusCode: 401}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrKeyExpired, Err: ErrServer}, false, false},
		{&APIError{Kind: ErrRetriesExhausted, Err: ErrServer}, false, true},
		{&APIError{Kind: testErrInsufficientBalance}, false, false},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("job: %w", c.err)
		assert.Equal(t, c.resumable, IsResumable(wrapped), "IsResumable %v", c.err)
		assert.Equal(t, c.temporary, IsTemporary(wrapped), "IsTemporary %v", c.err)
	}
	assert.False(t, IsResumable(nil))
	assert.False(t, IsResumable(errors.New("plain")))
}

// kindCodec is the core codec naming the kind of the codes it lists, as a
// provider's codec does for its own codes.
type kindCodec map[string]error

func (kindCodec) DecodeSuccess(status int, h http.Header, body []byte, out any) error {
	return jsonCodec{}.DecodeSuccess(status, h, body, out)
}

func (k kindCodec) DecodeError(status int, h http.Header, body []byte, e *APIError) {
	jsonCodec{}.DecodeError(status, h, body, e)
	e.Kind = k[e.Code]
}

// An insufficient balance answer through the client is resumable with the
// same key.
func TestInsufficientBalanceResumable(t *testing.T) {
	rec := &recorder{statuses: []int{http.StatusPaymentRequired},
		body: `{"code":402,"message":"余额不足","message_key":"insufficient_balance","data":null}`}
	c := setup(t, rec, WithTestCodec(kindCodec{"insufficient_balance": testErrInsufficientBalance}))
	_, err := c.Do(t.Context(), postReq(), nil, WithKey(testKey("balance-key-1")))
	require.ErrorIs(t, err, testErrInsufficientBalance)
	assert.True(t, IsResumable(err))
	assert.Equal(t, "balance-key-1", KeyOf(err).String())
	_, err = c.Do(t.Context(), postReq(), nil, WithoutKey())
	require.ErrorIs(t, err, ErrKeyRequired)
	assert.False(t, IsResumable(err), "no key: nothing to resume")
}

// Whatever a server echoes in its error code stays out of the error text.
func TestServerErrorCodeIsRedacted(t *testing.T) {
	rec := &recorder{statuses: []int{400}, body: `{"code":"card 4111111111111111 refused, token=SECRETTOKEN","message":"no"}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrInvalidRequest)
	assert.NotContains(t, err.Error(), "4111111111111111")
	assert.NotContains(t, err.Error(), "SECRETTOKEN")
	// The key is the client's own UUID, nothing of the code (a bare
	// "4111" needle matched random UUIDs now and then).
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, KeyOf(err).String())
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.NotContains(t, ae.Code, "4111111111111111")
}

// A known code is still recognised after redaction.
func TestKnownServerCodeKeepsItsKind(t *testing.T) {
	rec := &recorder{statuses: []int{409}, body: `{"message_key":"openapi_idempotency_key_conflict","message":"conflict"}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrIdempotencyConflict)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "openapi_idempotency_key_conflict", ae.Code)
}
