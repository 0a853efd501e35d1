package redact

import (
	"strings"
	"testing"
)

func BenchmarkRedactStringShort(b *testing.B) {
	for b.Loop() {
		_ = String("req_01HF3K2M9Q")
	}
}

func BenchmarkRedactStringError(b *testing.B) {
	s := "payonce: a55 charges.create: card declined (HTTP 402 CARD_DECLINED): insufficient funds [idempotency key 550e8400-e29b-41d4-a716-446655440000, 1 attempt(s)]"
	for b.Loop() {
		_ = String(s)
	}
}

// A long run of short digit groups glued to a word at its end: each rune
// is read a bounded number of times (it was quadratic).
func BenchmarkRedactStringGluedGroups(b *testing.B) {
	s := strings.Repeat("1 ", 1<<17) + "a"
	for b.Loop() {
		_ = maskDigitRuns(s)
	}
}

// A request ID as most servers send it (X-Request-Id): redacted on every
// answer.
func BenchmarkRedactStringRequestID(b *testing.B) {
	for b.Loop() {
		_ = String("550e8400-e29b-41d4-a716-446655440000")
	}
}

// An error message holding an encoded body: the decoders' own cost.
func BenchmarkRedactStringEncoded(b *testing.B) {
	s := "bad request: body eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIiwiY3Z2IjoiMTIzIn0 at %32%30%32%36 (&#52;&#50;)"
	for b.Loop() {
		_ = String(s)
	}
}
