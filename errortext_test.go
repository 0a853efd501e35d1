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

// repeated returns the first phrase said twice in an error text: a
// sentinel's text, a provider name followed by a colon, or a ": "
// separated segment.
func repeated(s string) string {
	for _, k := range []error{ErrKeyRequired, ErrKeyTooShort, ErrKeyTooLong, ErrKeyInvalidChars, ErrIdempotencyConflict,
		ErrInsufficientBalance, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrInvalidState, ErrInvalidRequest,
		ErrRateLimited, ErrServer, ErrSignatureInvalid, ErrTimestampExpired, ErrNonceReplayed, ErrCardDeclined,
		ErrChargeFailed, ErrKeyExpired, ErrRetriesExhausted, ErrRetryBudgetExhausted, ErrTransport,
		ErrMalformedResponse, ErrInvalidAmount, ErrInvalidCard, ErrInvalidConfig, ErrSignerTemporary, ErrRedirectRefused} {
		if strings.Count(s, k.Error()) > 1 {
			return k.Error()
		}
	}
	for _, p := range []string{"a55", "coinepay", "test"} {
		if strings.Count(s, p+" ")+strings.Count(s, p+": ") > 1 {
			return p
		}
	}
	seen := map[string]bool{}
	for _, seg := range strings.Split(s, ": ") {
		if seen[seg] {
			return seg
		}
		seen[seg] = true
	}
	return ""
}

// Every way an *APIError is built says each thing once.
func TestErrorTextSaysEachThingOnce(t *testing.T) {
	keyErr := a55Rules().Validate("short")
	require.Error(t, keyErr)
	reqKeyErr := coinepayRules().Validate("")
	require.Error(t, reqKeyErr)
	cardErr := testCard()
	cardErr.Number = "4111111111111112"
	vErr := cardErr.Validate(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.Error(t, vErr)
	_, amtErr := ParseAmount("1.234")
	cases := []*APIError{
		{Provider: "a55", Operation: "charges.create", Kind: ErrKeyTooShort, Err: keyErr, Key: testKey("short")},
		{Provider: "coinepay", Operation: "cards.apply", Kind: ErrKeyRequired, Err: reqKeyErr},
		{Provider: "a55", Operation: "charges.create", Kind: ErrInvalidCard, Err: vErr, Key: testKey("k-0123456789abcdef")},
		{Provider: "a55", Operation: "charges.refund", Kind: ErrInvalidAmount, Err: amtErr, Key: testKey("k-0123456789abcdef")},
		{Provider: "a55", Operation: "charges.create", Kind: ErrUnauthorized, Key: testKey("k-0123456789abcdef"),
			Err: fmt.Errorf("sign: %w", fmt.Errorf("a55: the token endpoint refused the request (HTTP 401 invalid_client): %w", ErrUnauthorized))},
		{Provider: "test", Method: "POST", Path: "/x", Kind: ErrTransport, Err: fmt.Errorf("%w: redirect to plain http:// refused", ErrTransport)},
		{Provider: "test", Operation: "op", Kind: ErrRetriesExhausted, Err: ErrServer, StatusCode: 503, Attempts: 5, Key: testKey("k-0123456789abcdef")},
		{Provider: "test", Operation: "op", Kind: ErrRetriesExhausted, Err: fmt.Errorf("%w: %w", ErrTransport, errors.New("dial: refused")), Attempts: 5},
		{Provider: "a55", Operation: "charges.create", Kind: ErrCardDeclined, StatusCode: 402, Code: "CARD_DECLINED", Message: "CARD_DECLINED",
			Err: errors.New("charge c1 status error")},
		{Provider: "coinepay", Operation: "cards.apply", Kind: ErrIdempotencyConflict, StatusCode: 409,
			Code: "openapi_idempotency_key_conflict", Message: "Idempotency-Key 冲突", Key: testKey("k-1")},
		{Provider: "a55", Operation: "charges.create", Kind: ErrInvalidConfig,
			Err: fmt.Errorf("sign: %w", fmt.Errorf("%w: a55: the token endpoint answered a redirect", ErrInvalidConfig))},
		{Provider: "test", Operation: "op", Kind: context.Canceled, Err: ErrServer, StatusCode: 500},
		{Provider: "a55", Operation: "charges.create", Kind: ErrRedirectRefused, StatusCode: 307,
			Err: &RedirectError{StatusCode: 307, Method: "POST", Reason: "not followed"}},
		{Provider: "test", Operation: "op", Kind: ErrRetriesExhausted, Attempts: 5, Key: testKey("k-0123456789abcdef"),
			Err: fmt.Errorf("%w: %w", ErrTransport, fmt.Errorf("sign: %w", fmt.Errorf("%w: a55: the token endpoint refused the request (HTTP 503)", ErrSignerTemporary)))},
		{Kind: ErrInvalidRequest, Err: errors.New("nil request")},
		{Err: errors.New("only a cause")},
		{},
	}
	for _, e := range cases {
		s := e.Error()
		assert.Empty(t, repeated(s), "said twice in %q", s)
		if e.Kind != nil {
			assert.Contains(t, s, e.Kind.Error(), "the kind is always said")
		}
	}
	assert.Equal(t, "payonce: a55 charges.create: idempotency key too short: at least 16 characters, got 5 [idempotency key short]", cases[0].Error())
	assert.Equal(t, "payonce: a55 charges.create: invalid card: card.number: fails the Luhn check [idempotency key k-0123456789abcdef]", cases[2].Error())
	assert.Equal(t, "idempotency key too short: a55: at least 16 characters, got 5", keyErr.Error())
}

// The errors the client itself returns say each thing once too.
func TestClientErrorsSayEachThingOnce(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	_, err := c.Do(t.Context(), postReq(), nil, WithKey(testKey("bad key with spaces")))
	require.ErrorIs(t, err, ErrKeyInvalidChars)
	assert.Empty(t, repeated(err.Error()), err.Error())
	req := postReq()
	req.Validate = func() error { return invalid(ErrInvalidCard, "card.cvv", "want 3 or 4 digits") }
	_, err = c.Do(t.Context(), req, nil)
	require.ErrorIs(t, err, ErrInvalidCard)
	assert.Empty(t, repeated(err.Error()), err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "invalid card"), err.Error())
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
		{&APIError{Key: testKey(k), Kind: ErrInsufficientBalance, StatusCode: 402}, true, false},
		{&APIError{Key: testKey(k), Kind: ErrIdempotencyConflict, StatusCode: 409}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrInvalidCard, Err: invalid(ErrInvalidCard, "card.number", "x")}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrInvalidRequest, StatusCode: 422}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrCardDeclined, StatusCode: 402}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrChargeFailed}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrUnauthorized, StatusCode: 401}, false, false},
		{&APIError{Key: testKey(k), Kind: ErrKeyExpired, Err: ErrServer}, false, false},
		{&APIError{Kind: ErrRetriesExhausted, Err: ErrServer}, false, true},
		{&APIError{Kind: ErrInsufficientBalance}, false, false},
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
	return JSONCodec{}.DecodeSuccess(status, h, body, out)
}

func (k kindCodec) DecodeError(status int, h http.Header, body []byte, e *APIError) {
	JSONCodec{}.DecodeError(status, h, body, e)
	e.Kind = k[e.Code]
}

// An insufficient balance answer through the client is resumable with the
// same key.
func TestInsufficientBalanceResumable(t *testing.T) {
	rec := &recorder{statuses: []int{http.StatusPaymentRequired},
		body: `{"code":402,"message":"余额不足","message_key":"insufficient_balance","data":null}`}
	c := setup(t, rec, WithCodec(kindCodec{"insufficient_balance": ErrInsufficientBalance}))
	_, err := c.Do(t.Context(), postReq(), nil, WithKey(testKey("balance-key-1")))
	require.ErrorIs(t, err, ErrInsufficientBalance)
	assert.True(t, IsResumable(err))
	assert.Equal(t, "balance-key-1", KeyOf(err).ID())
	_, err = c.Do(t.Context(), postReq(), nil, WithoutKey())
	require.ErrorIs(t, err, ErrKeyRequired)
	assert.False(t, IsResumable(err), "no key: nothing to resume")
}

func TestMustParseAmount(t *testing.T) {
	assert.Equal(t, "100.50", MustParseAmount("100.5").String())
	assert.PanicsWithValue(t, `payonce: MustParseAmount("1.234"): invalid amount: want a decimal string with at most two decimals, like "100.00"`,
		func() { MustParseAmount("1.234") })
	assert.Panics(t, func() { MustParseAmount("") })
}
