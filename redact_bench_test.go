package payonce

import "testing"

func BenchmarkRedactStringShort(b *testing.B) {
	for b.Loop() {
		_ = RedactString("req_01HF3K2M9Q")
	}
}

func BenchmarkRedactStringError(b *testing.B) {
	s := "payonce: a55 charges.create: card declined (HTTP 402 CARD_DECLINED): insufficient funds [idempotency key 550e8400-e29b-41d4-a716-446655440000, 1 attempt(s)]"
	for b.Loop() {
		_ = RedactString(s)
	}
}
