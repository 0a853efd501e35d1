package payonce

import (
	"context"
	"encoding/json"
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
		testErrInsufficientBalance, ErrUnauthorized, ErrForbidden, ErrNotFound, testErrInvalidState, ErrInvalidRequest,
		ErrRateLimited, ErrServer, testErrSignatureInvalid, testErrTimestampExpired, testErrNonceReplayed, testErrCardDeclined,
		testErrChargeFailed, ErrKeyExpired, ErrRetriesExhausted, ErrRetryBudgetExhausted, ErrTransport,
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
	keyErr := validateKey(a55Rules(), "short")
	require.Error(t, keyErr)
	reqKeyErr := validateKey(coinepayRules(), "")
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
		{Provider: "a55", Operation: "charges.create", Kind: testErrCardDeclined, StatusCode: 402, Code: "CARD_DECLINED", Message: "CARD_DECLINED",
			Err: errors.New("charge c1 status error")},
		{Provider: "coinepay", Operation: "cards.apply", Kind: ErrIdempotencyConflict, StatusCode: 409,
			Code: "openapi_idempotency_key_conflict", Message: "Idempotency-Key 冲突", Key: testKey("k-1")},
		{Provider: "a55", Operation: "charges.create", Kind: ErrInvalidConfig,
			Err: fmt.Errorf("sign: %w", fmt.Errorf("%w: a55: the token endpoint answered a redirect", ErrInvalidConfig))},
		{Provider: "test", Operation: "op", Kind: context.Canceled, Err: ErrServer, StatusCode: 500},
		{Provider: "a55", Operation: "charges.create", Kind: ErrRedirectRefused, StatusCode: 307,
			Err: &redirectError{StatusCode: 307, Method: "POST", Reason: "not followed"}},
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

const textCut = " [cut]" // what redact.Cut ends a cut text with

// A hostile server's error text is bounded: a 1 MiB message, code,
// request ID or list of details does not make every Error() call (and
// every log line) redact a megabyte again, and the cut never leaves part
// of a card number or token in clear.
func TestServerErrorTextBounded(t *testing.T) {
	big := strings.Repeat("card 4111 1111 1111 1111 token tok_hostile_42 ", 700<<10/46)
	details := make([]ErrorDetail, 5000)
	for i := range details {
		details[i] = ErrorDetail{Field: "f", Reason: big[:1000], Code: "c"}
	}
	body, err := json.Marshal(map[string]any{"request_id": big[:50000], "error": map[string]any{
		"code": big[:50000], "message": big, "details": details[:150]}})
	require.NoError(t, err)
	require.Less(t, len(body), maxErrorBody, "the whole body is read")

	rec := &recorder{statuses: []int{400}, body: string(body)}
	c := setup(t, rec)
	_, err = c.Do(t.Context(), postReq(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.LessOrEqual(t, len(ae.Message), maxServerText+len(textCut))
	assert.LessOrEqual(t, len(ae.Code), maxServerCode+len(textCut))
	assert.LessOrEqual(t, len(ae.RequestID), maxServerCode+len(textCut))
	assert.LessOrEqual(t, len(ae.Details), maxServerDetails)
	assert.LessOrEqual(t, len(err.Error()), 2*maxServerText+2*maxServerCode+1000)
	assert.True(t, strings.HasSuffix(ae.Message, textCut), "the cut is said")
	for _, s := range []string{err.Error(), ae.Message, ae.Code, ae.RequestID, ae.Details[0].Reason} {
		assert.NotContains(t, s, "tok_hostile")
		assert.NotContains(t, s, "4111 ")
		assert.NotContains(t, s, "tok_")
	}
}

// The client's own validation messages read whole once redacted: a field
// named like a secret ("card.cvv") followed by prose is not a value.
func TestCardValidationMessagesSurviveRedaction(t *testing.T) {
	card := Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "12a"}
	c := setup(t, &recorder{})
	req := postReq()
	req.Validate = func() error { return card.Validate(time.Now()) }
	// A fixed key: the text names the key, and a random UUID holds the
	// hex digits "12a" now and then.
	_, err := c.Do(t.Context(), req, nil, WithKey(testKey("order-key-fixed-0001")))
	require.ErrorIs(t, err, ErrInvalidCard)
	assert.Contains(t, err.Error(), "invalid card: card.cvv: must be 3 or 4 digits")
	assert.NotContains(t, err.Error(), "REDACTED")
	assert.NotContains(t, err.Error(), "12a")
}

// A server message that only repeats the kind ("invalid request", "Not
// found", "Internal Server Error") is said once.
func TestServerMessageThatRepeatsTheKindIsSaidOnce(t *testing.T) {
	for _, e := range []*APIError{
		{Provider: "a55", Operation: "charges.create", Kind: ErrInvalidRequest, StatusCode: 400, Code: "VALIDATION_ERROR", Message: "invalid request"},
		{Provider: "a55", Operation: "charges.get", Kind: ErrNotFound, StatusCode: 404, Code: "NOT_FOUND", Message: "Not found"},
		{Provider: "coinepay", Operation: "cards.apply", Kind: ErrServer, StatusCode: 500, Message: "Server error."},
	} {
		s := e.Error()
		assert.Equal(t, 1, strings.Count(strings.ToLower(s), e.Kind.Error()), s)
		assert.Empty(t, repeated(strings.ToLower(s)), s)
	}
	// A message that says more is kept.
	e := &APIError{Kind: ErrNotFound, StatusCode: 404, Message: "charge not found"}
	assert.Contains(t, e.Error(), "charge not found")
}

// A provider's field-level details say what to fix: the error text names
// them (a few, not an unbounded list a hostile server could send).
func TestErrorTextNamesTheServersFieldDetails(t *testing.T) {
	e := &APIError{Provider: "a55", Operation: "charges.create", Kind: ErrInvalidRequest, StatusCode: 400,
		Code: "VALIDATION_ERROR", Message: "invalid request",
		Details: []ErrorDetail{{Field: "type_charge", Reason: "want one of credit_card, debit_card, pix"}}}
	assert.Equal(t, "payonce: a55 charges.create: invalid request (HTTP 400 VALIDATION_ERROR): type_charge: want one of credit_card, debit_card, pix", e.Error())

	many := &APIError{Kind: ErrInvalidRequest, StatusCode: 400, Message: "bad fields"}
	for range 50 {
		many.Details = append(many.Details, ErrorDetail{Field: "f", Reason: "r", Code: "c"})
	}
	s := many.Error()
	assert.Equal(t, 3, strings.Count(s, "f: r"), s)
	assert.Contains(t, s, "47 more")
	assert.Contains(t, s, "bad fields")
}

// A key the rules refuse is still given back (KeyOf), but the error text
// cannot be used to forge log lines with it, nor grow without end.
func TestRefusedKeyCannotForgeTheErrorText(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	forged := "abcdefghijklmnop\nlevel=ERROR msg=\"forged\"\r\x1b[2J"
	_, err := c.Do(context.Background(), postReq(), nil, WithKey(testKey(forged)))
	require.ErrorIs(t, err, ErrKeyInvalidChars)
	assert.Equal(t, forged, KeyOf(err).String())
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), "\r")
	assert.NotContains(t, err.Error(), "\x1b")

	long := strings.Repeat("k", 5000)
	_, err = c.Do(context.Background(), postReq(), nil, WithKey(testKey(long)))
	require.ErrorIs(t, err, ErrKeyTooLong)
	assert.Equal(t, long, KeyOf(err).String())
	assert.Less(t, len(err.Error()), 600)
	assert.Empty(t, rec.seen())
}

// A hostile server cannot forge log lines through the text of its error
// answer: control characters (CR, LF, escapes) in its code, message,
// request ID or details never reach the error.
func TestServerTextCannotForgeTheErrorText(t *testing.T) {
	rec := &recorder{statuses: []int{400}, header: http.Header{"X-Request-Id": {"req_1"}},
		body: `{"error":{"code":"x\ny","message":"declined\nlevel=INFO msg=\"payment ok\"\u001b[2J\u0085","details":[{"field":"a\rb","reason":"c\nd"}]}}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.ErrorIs(t, err, ErrInvalidRequest)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	for _, s := range []string{err.Error(), ae.Code, ae.Message, ae.Details[0].Field, ae.Details[0].Reason} {
		assert.NotContains(t, s, "\n")
		assert.NotContains(t, s, "\r")
		assert.NotContains(t, s, "\x1b")
		assert.NotContains(t, s, "\u0085")
	}
	assert.Contains(t, ae.Message, "declined")
}

type echoingSigner struct{}

// Sign fails like a token endpoint that echoes a hostile error_description.
func (echoingSigner) Sign(*http.Request, []byte) error {
	return errors.New("token endpoint said: bad\nlevel=INFO msg=\"ok\"\x1b[2J")
}

// Nor through a cause whose text came from a server (a token endpoint's
// error description).
func TestCauseTextCannotForgeTheErrorText(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec, WithSigner(echoingSigner{}))
	_, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "token endpoint said")
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), "\x1b")
}

// The idempotency key is the merchant's own handle on the operation: the
// error text shows it as it is, whatever digits it holds (dates, epoch
// milliseconds, order numbers), while the server's text around it is
// still redacted.
func TestErrorKeepsKeyReadable(t *testing.T) {
	for _, key := range []string{"order-20261129-0001-000123", "order:1732881234567", "invoice_2026_11_29_000123",
		"charges.create:550e8400-e29b-41d4-a716-446655440000"} {
		e := &APIError{Provider: "a55", Operation: "charges.create", Kind: ErrServer, StatusCode: 500,
			Message: "card 4111 1111 1111 1111 token tok_hostile", Key: testKey(key), Attempts: 3}
		s := e.Error()
		assert.Contains(t, s, "[idempotency key "+key+", 3 attempt(s)]")
		assert.NotContains(t, s, "4111 1111")
		assert.NotContains(t, s, "tok_hostile")
	}
}

func TestErrorDetailsAreRedacted(t *testing.T) {
	rec := &recorder{statuses: []int{400}, body: `{"error":{"code":"INVALID_CARD","message":"card 4111111111111111 refused",` +
		`"details":[{"field":"card.number","reason":"4111111111111111 fails the Luhn check"},{"field":"card.cvv","reason":"cvv=123 is wrong"}]}}`}
	c := setup(t, rec)
	_, err := c.Do(context.Background(), postReq(), nil)
	require.Error(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, err)
		assert.NotContains(t, out, "4111111111111111", verb)
		assert.NotContains(t, out, "123 is", verb)
	}
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Len(t, ae.Details, 2)
	assert.Contains(t, ae.Details[0].Reason, "1111")
}
