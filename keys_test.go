package payonce

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewKeyForms(t *testing.T) {
	cases := []struct {
		name  string
		parts []string
		want  string // the whole key, or its readable prefix when hashed
		hash  bool
	}{
		{"fits: the join", []string{"order", "1001", "payment"}, "order:1001:payment", false},
		{"fits: a task key", []string{"openapi:apply", "task-0042"}, "openapi:apply:task-0042", false},
		{"uuid", []string{"550e8400-e29b-41d4-a716-446655440000"}, "550e8400-e29b-41d4-a716-446655440000", false},
		{"too short for A55", []string{"order", "1", "payment"}, "order:1:payment~", true},
		{"one short part", []string{"x"}, "x~", true},
		{"outside the charset", []string{"pedido", "ação-001", "payment"}, "pedido:a__o-001:payment~", true},
		{"space and slash", []string{"order 42/x", "payment"}, "order_42_x:payment~", true},
		{"tilde is reserved", []string{"order~0000000001"}, "order_0000000001~", true},
		{"too long", []string{strings.Repeat("a", 200)}, strings.Repeat("a", 95) + "~", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := opKey(tc.parts...)
			require.NoError(t, err)
			requireValidForBoth(t, key)
			if !tc.hash {
				assert.Equal(t, tc.want, key)
				return
			}
			require.True(t, strings.HasPrefix(key, tc.want), key)
			assert.Len(t, key, len(tc.want)+keyHashLen)
			assert.Regexp(t, `~[0-9a-f]{32}$`, key)
		})
	}
}

func TestNewKeyJoinIsTheInput(t *testing.T) {
	a, err := opKey("a:b", "c-0123456789abcdef")
	require.NoError(t, err)
	b, err := opKey("a", "b:c-0123456789abcdef")
	require.NoError(t, err)
	assert.Equal(t, a, b, "parts whose join is the same name the same operation")

	// A hashed key and a plain one never meet: the plain form has no '~'.
	hashed, err := opKey("order", "1")
	require.NoError(t, err)
	plain, err := opKey(hashed)
	require.NoError(t, err)
	assert.NotEqual(t, hashed, plain)
}

func TestNewKeyRefusesEmptyParts(t *testing.T) {
	for _, parts := range [][]string{nil, {""}, {"order", "", "payment"}, {"order", " \t", "payment"}} {
		key, err := opKey(parts...)
		require.ErrorIs(t, err, ErrKeyRequired, "%q", parts)
		var ke *ValidationError
		require.ErrorAs(t, err, &ke)
		assert.Empty(t, key)
	}
}

// Property: for any parts, the key is valid for both providers, the same
// parts give the same key, and different joins give different keys.
func TestNewKeyProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab0-._~:/ é中\x00")
	seen := map[string]string{} // key -> join
	for range 20000 {
		parts := make([]string, 1+rng.IntN(4))
		for i := range parts {
			var b strings.Builder
			b.WriteByte('p') // never blank
			for range rng.IntN(12) {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
			if rng.IntN(50) == 0 {
				b.WriteString(strings.Repeat("z", 130))
			}
			parts[i] = b.String()
		}
		key, err := opKey(parts...)
		require.NoError(t, err)
		requireValidForBoth(t, key)
		again, err := opKey(parts...)
		require.NoError(t, err)
		require.Equal(t, key, again)
		join := strings.Join(parts, ":")
		if prev, ok := seen[key]; ok {
			require.Equal(t, prev, join, "two different operations got the key %q", key)
		}
		seen[key] = join
	}
	assert.Greater(t, len(seen), 15000)
}

func FuzzNewKey(f *testing.F) {
	for _, s := range []string{"order:1", "order:1001:payment", "pedido:ação", "a~b", strings.Repeat("x", 300), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := opKey(strings.Split(s, "|")...)
		if err != nil {
			require.ErrorIs(t, err, ErrKeyRequired)
			return
		}
		requireValidForBoth(t, key)
		again, _ := opKey(strings.Split(s, "|")...)
		require.Equal(t, key, again)
	})
}

func requireValidForBoth(t *testing.T, key string) {
	t.Helper()
	require.NoError(t, validateKey(a55Rules(), key), key)
	require.NoError(t, validateKey(coinepayRules(), key), key)
}

// opKey is the value of the key NewKey builds from parts.
func opKey(parts ...string) (string, error) {
	k, err := NewKey(time.Unix(1767225600, 0), parts...)
	return k.String(), err
}

// A key always carries its creation time: a zero time is refused, and the
// time given is the key's, whatever its zone.
func TestNewKeyNeedsItsCreationTime(t *testing.T) {
	k, err := NewKey(time.Time{}, "order", "42", "payment")
	require.ErrorIs(t, err, ErrInvalidRequest)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.True(t, k.IsZero())

	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("BRT", -3*3600))
	k, err = NewKey(at, "order", "42", "payment")
	require.NoError(t, err)
	assert.True(t, at.Equal(k.Created()))
	assert.Equal(t, time.UTC, k.Created().Location())
}

// A Key printed with %#v (alone, or inside a Meta or an *APIError) reads
// as its value and its creation time, not as time.Time's internals.
func TestKeyGoStringIsReadable(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
	k, err := NewKey(created, "order", "1001", "payment")
	require.NoError(t, err)
	want := `payonce.Key{ID:"order:1001:payment", Created:"2026-12-01T10:30:00Z"}`
	assert.Equal(t, want, fmt.Sprintf("%#v", k))
	assert.Contains(t, fmt.Sprintf("%#v", Meta{Key: k}), want)
	assert.Contains(t, fmt.Sprintf("%#v", &APIError{Key: k}), want)
	assert.Equal(t, "payonce.Key{}", fmt.Sprintf("%#v", Key{}))
}

// testKey is the key whose value is id, created now: a key a test names by
// hand, whatever the rules say of it.
func testKey(id string) Key { return Key{id: id, created: keyTime(time.Now())} }

// testKeyAt is the key whose value is id, created at created.
func testKeyAt(id string, created time.Time) Key { return Key{id: id, created: keyTime(created)} }
