package a55

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
)

// A charge built in code with a whole card number in its summary logs the
// number as payonce.CardNumber masks it, under slog's text and JSON
// handlers, however the number is written.
func TestChargeLogValueMasksTheSummaryNumber(t *testing.T) {
	for _, n := range []string{"4111 1111 1111 1111", "4111111111111112", "4111x1111x1111x1111"} {
		ch := Charge{UUID: "c1", Card: &CardSummary{Number: payonce.CardNumber(n)}}
		var b bytes.Buffer
		slog.New(slog.NewJSONHandler(&b, nil)).Info("charge", "charge", ch)
		slog.New(slog.NewTextHandler(&b, nil)).Info("charge", "charge", ch)
		out := b.String()
		assert.NotContains(t, out, n, "the number in a log record")
		masked := fmt.Sprint(payonce.CardNumber(n)) // "************1111"
		assert.Contains(t, out, `"number":"`+masked+`"`, n)
		assert.Contains(t, out, "charge.card.number="+masked, n)
	}
}
