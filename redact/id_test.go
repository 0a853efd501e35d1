package redact

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ordinary request IDs take the fast path and come back as sent (a
// canonical UUID has String's own).
func TestRequestIDOrdinaryIsKept(t *testing.T) {
	uuid := "550e8400-e29b-41d4-a716-446655440000"
	assert.Equal(t, uuid, (*Redactor)(nil).ID(uuid))
	for _, id := range []string{
		"4bf92f3577b34da6a3ce929d0e0e4736",
		"req_8f3a2b1c9d4e5f6a7b8c",
		"req-1733112345-9f8e7d6c",
		"abc123",
	} {
		assert.True(t, plainID(nil, id), id)
		assert.Equal(t, id, (*Redactor)(nil).ID(id), id)
	}
}

// A hostile request ID never takes the fast path: a card number in
// clear, glued by separators, hex-encoded, or a client secret hex-encoded,
// is redacted as String redacts it.
func TestRequestIDHostileIsRedacted(t *testing.T) {
	secret := "s3cr3t-value-0123"
	r := newRedactor([]string{secret})
	for _, id := range []string{
		"req-4111111111111111",
		"4111-1111-1111-1111",
		"4111.1111_1111-1111",
		hex.EncodeToString([]byte("4111-1111-1111-1111")),
		hex.EncodeToString([]byte("x=4111111111111111")),
		hex.EncodeToString([]byte(secret)),
		"a" + hex.EncodeToString([]byte("4111-1111-1111-1111")),
		"req_" + secret,
	} {
		assert.False(t, plainID(r, r.cutSecrets(id)), id)
		got := r.ID(id)
		assert.Equal(t, r.Redact(id), got, id)
		assert.NotEqual(t, id, got, id)
	}
}

// The fast path agrees with String wherever it answers: random IDs
// of its alphabet, hex runs among them, are never changed by redaction
// when plainID keeps them.
func TestPlainIDAgreesWithString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789abcdef0123456789abcdefghz._-"
	fast := 0
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(maxPlainID) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		id := b.String()
		if plainID(nil, id) {
			fast++
			require.Equal(t, id, String(id), "plainID kept %q", id)
		}
	}
	assert.Greater(t, fast, 1000)
}

// plainID counts on a letter ending a run of digit groups: every
// lowercase letter does.
func TestLetterEndsADigitRun(t *testing.T) {
	for c := 'a'; c <= 'z'; c++ {
		l := string(c)
		id := "4111" + l + "1111" + l + "1111" + l + "1111"
		assert.Equal(t, id, String(id), id)
	}
}

func BenchmarkID(b *testing.B) {
	for _, id := range []string{"550e8400-e29b-41d4-a716-446655440000", "4bf92f3577b34da6a3ce929d0e0e4736", "req-1733112345678-9f8e7d6c"} {
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = (*Redactor)(nil).ID(id)
			}
		})
	}
}
