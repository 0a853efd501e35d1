package payonce

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
