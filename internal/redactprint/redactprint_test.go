package redactprint

import (
	"github.com/payonce/payonce/internal/testsupport/logtest"
	"github.com/payonce/payonce/redact"

	"bytes"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type inner struct{ Name string }

type result struct {
	ID     string `json:"id"`
	Note   string
	Count  int
	At     time.Time
	Raw    redact.RawJSON
	Ptr    *inner
	secret string
}

type printed result

func (r printed) Format(f fmt.State, verb rune) { Format(f, verb, result(r), "redactprint.printed") }

func (r printed) LogValue() slog.Value { return LogValue(result(r)) }

func sample() printed {
	return printed{ID: "ch_4111111111111111", Note: "token=abc", Count: 7, At: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC),
		Raw: redact.RawJSON(`{"card":"5555555555554444"}`), Ptr: &inner{"4111111111111111"}, secret: "4111111111111111"}
}

func TestFormatRedactsEachFieldUnderEveryVerb(t *testing.T) {
	r := sample()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		s := fmt.Sprintf(verb, r)
		for _, leak := range []string{"4111111111111111", "5555555555554444", "abc"} {
			assert.NotContains(t, s, leak, verb)
		}
		assert.Contains(t, s, "7", verb)
	}
	assert.Contains(t, fmt.Sprintf("%+v", r), "Count:7")
	assert.Contains(t, fmt.Sprintf("%#v", r), "redactprint.printed{ID:")
	assert.Contains(t, fmt.Sprintf("%#v", r), "(*redactprint.inner)(0x")
	assert.Contains(t, fmt.Sprintf("%v", printed{}), "<nil>")
	// The value itself is untouched.
	assert.Equal(t, "ch_4111111111111111", r.ID)
}

func TestLogValueRedactsStringsAndUsesJSONNames(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "r", sample(), "nilptr", (*printed)(nil))
	out := buf.String()
	for _, leak := range []string{"4111111111111111", "5555555555554444", "token=abc"} {
		assert.NotContains(t, out, leak)
	}
	assert.Contains(t, out, `"id":`)
	assert.Contains(t, out, `"Count":7`)
	assert.NotContains(t, out, "secret")
	assert.Contains(t, out, `"At":"2026-11-29T00:00:00Z"`)
}

// code is a secret that masks itself for fmt and has no LogValue, as
// payonce.CVV and payonce.CardNumber.
type code string

func (code) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("***")) }

// A field that masks itself for fmt logs its masked text: its raw string
// never reaches the record, whatever redact.String would make of it.
func TestLogValueMasksAFieldThatFormatsItself(t *testing.T) {
	v := LogValue(struct {
		CVV  code `json:"cvv"`
		Note code
	}{CVV: "987", Note: "4111111111111112"})
	var b bytes.Buffer
	slog.New(slog.NewJSONHandler(&b, logtest.Options(slog.LevelInfo))).Info("r", "v", v)
	slog.New(slog.NewTextHandler(&b, logtest.Options(slog.LevelInfo))).Info("r", "v", v)
	out := b.String()
	assert.NotContains(t, out, "987")
	assert.NotContains(t, out, "4111111111111112")
	assert.Contains(t, out, `"cvv":"***"`)
}

// A nil pointer field whose type logs itself with a value receiver logs
// as null, never a panic in its LogValue.
func TestLogValueOfANilPointerThatLogsItself(t *testing.T) {
	v := LogValue(struct {
		Before string
		P      *printed
		After  string
	}{Before: "a", After: "b"})
	var b bytes.Buffer
	slog.New(slog.NewJSONHandler(&b, logtest.Options(slog.LevelInfo))).Info("r", "v", v)
	assert.Contains(t, b.String(), `"P":null`)
	assert.NotContains(t, b.String(), "panicked")
}
