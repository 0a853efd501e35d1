package payonce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/internal/testsupport/logtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testPAN = "4111111111111111"
	testCVV = "737"
)

func testCard() Card {
	return Card{Number: testPAN, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: testCVV}
}

func TestCardPrintedFormsAreMasked(t *testing.T) {
	c := testCard()
	type order struct {
		ID   string
		Card Card
		Ptr  *Card
	}
	o := order{ID: "o1", Card: c, Ptr: &c}
	var outs []string
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		outs = append(outs, fmt.Sprintf(f, c), fmt.Sprintf(f, o), fmt.Sprintf(f, &c),
			fmt.Sprintf(f, c.Number), fmt.Sprintf(f, c.CVV))
	}
	outs = append(outs, fmt.Sprintf("%#v", c), fmt.Sprint(c), fmt.Sprintln(o))
	for _, s := range outs {
		assert.NotContains(t, s, testPAN)
		assert.NotContains(t, s, "411111111111")
		assert.NotContains(t, s, testCVV)
	}
	assert.Equal(t, "card ************1111 exp 12/2030", fmt.Sprint(c))
	assert.Contains(t, fmt.Sprintf("%+v", c), "CVV:***")
	assert.Equal(t, "1111", c.Number.Last4())
}

// A Card alone has no wire form: a generic request whose body is a Card
// sends it masked. Only a provider's request that carries one (A55's
// charge) sends it whole.
func TestCardAloneIsSentMasked(t *testing.T) {
	b, err := corekit.MarshalWire(testCard())
	require.NoError(t, err)
	assert.JSONEq(t, `{"number":"************1111","holder_name":"TEST","expiration_month":"12","expiration_year":"2030"}`, string(b))
}

func TestCardValidate(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	require.NoError(t, testCard().Validate(now))
	cases := map[string]func(*Card){
		"luhn":         func(c *Card) { c.Number = "4111111111111112" },
		"short":        func(c *Card) { c.Number = "41111" },
		"letters":      func(c *Card) { c.Number = "4111a11111111111" },
		"holder":       func(c *Card) { c.HolderName = " " },
		"month 13":     func(c *Card) { c.ExpirationMonth = "13" },
		"month text":   func(c *Card) { c.ExpirationMonth = "ab" },
		"year 2 digit": func(c *Card) { c.ExpirationYear = "30" },
		"expired":      func(c *Card) { c.ExpirationMonth, c.ExpirationYear = "10", "2026" },
		"cvv 2":        func(c *Card) { c.CVV = "12" },
		"cvv text":     func(c *Card) { c.CVV = "12a" },
	}
	for name, mutate := range cases {
		c := testCard()
		mutate(&c)
		err := c.Validate(now)
		assert.ErrorIs(t, err, ErrInvalidCard, name)
		var ve *ValidationError
		require.True(t, errors.As(err, &ve), name)
		assert.NotContains(t, err.Error(), string(c.Number), name)
		assert.NotContains(t, err.Error(), string(c.CVV), name)
	}
	c := testCard()
	c.ExpirationMonth, c.ExpirationYear = "11", "2026"
	assert.NoError(t, c.Validate(now), "valid through the end of its month")
}

// A card, an error and a failing operation are formatted and logged at
// debug level; no card number, CVV, secret or token may appear anywhere.
func TestNoSecretsInFormattedOutputOrLogs(t *testing.T) {
	const secret, token = "S3cr3t-Value-xyz", "tok_ABCDEF123456"
	var logs bytes.Buffer
	// Wait values are dropped, as is the time: no random digits can match the CVV.
	logger := slog.New(slog.NewJSONHandler(&logs, logtest.Options(slog.LevelDebug, "wait")))
	rec := &recorder{statuses: []int{503, 400}, body: `{"error":{"code":"INVALID_CARD","message":"card 4111111111111111 cvv=737 rejected"}}`}
	signer := newHMACSigner("demo-key", secret, nil)
	bearer := corekit.SignerFunc(func(r *http.Request, _ []byte) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return signer.Sign(r, nil)
	})
	c := setup(t, rec, WithLogger(logger), WithSigner(bearer))
	card := testCard()
	req := &Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge/", Keyed: true,
		Query: map[string][]string{"token": {token}},
		Body:  map[string]any{"amount": "1.00", "card": card}}
	_, opErr := c.Do(context.Background(), req, nil, WithKey(testKey("order-key-fixed")))
	require.Error(t, opErr)
	c.logger.Debug("merchant log", "card", card, "err", opErr, "token", token, "note", "Bearer "+token+" secret="+secret)

	outputs := []string{logs.String(), opErr.Error(), fmt.Sprintf("%v", opErr), fmt.Sprintf("%+v", opErr), fmt.Sprintf("%#v", card)}
	for _, s := range outputs {
		for _, bad := range []string{testPAN, testCVV, secret, token} {
			assert.NotContains(t, s, bad)
		}
	}
	assert.Contains(t, logs.String(), "payonce attempt", "the client does log at debug level")
	assert.Equal(t, 2, len(rec.seen()))
}

// A bare card number or CVV given to slog, through the text or the JSON
// handler, alone or inside a struct, shows no digit of it: their Format and
// MarshalJSON mask them wherever a handler reaches them.
func TestSlogMasksBareNumberAndCVV(t *testing.T) {
	c := testCard()
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, logtest.Options(slog.LevelInfo)) },
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, logtest.Options(slog.LevelInfo)) },
	} {
		var b bytes.Buffer
		slog.New(h(&b)).Info("card", "number", c.Number, "cvv", c.CVV, "held", struct {
			N CardNumber
			V CVV
		}{c.Number, c.CVV}, "card", c)
		assert.NotContains(t, b.String(), "411111111111", name)
		assert.NotContains(t, b.String(), testCVV, name)
		assert.Contains(t, b.String(), "1111", name)
	}
}

// Masking holds with Format and MarshalJSON alone: every fmt verb, both
// slog handlers, values, pointers and containers show no number nor CVV.
func TestCardMasksInEveryVerbAndHandler(t *testing.T) {
	c := testCard()
	var b bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&b, logtest.Options(slog.LevelInfo)), slog.NewJSONHandler(&b, logtest.Options(slog.LevelInfo))} {
		slog.New(h).Info("x", "card", c, "pcard", &c, "num", c.Number, "cvv", c.CVV,
			"s", struct{ C Card }{c}, "ps", &struct{ C *Card }{&c})
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for _, v := range []any{c.Number, c.CVV, c, &c, []Card{c}, map[string]CVV{"a": c.CVV}} {
			fmt.Fprintf(&b, f, v)
		}
	}
	out := b.String()
	assert.Contains(t, out, "1111")
	for _, secret := range []string{testPAN, testCVV, fmt.Sprintf("%x", testPAN), fmt.Sprintf("%x", testCVV)} {
		assert.NotContains(t, out, secret)
	}
}
