package payonce

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// a55Rules and coinepayRules are the providers' key rules (a55.KeyRules,
// coinepay.KeyRules), which the core's own tests cannot import; their
// packages' tests check that they are the same.
func a55Rules() KeyRules {
	return KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: DefaultKeyWindow}
}

const coinepayCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:"

func coinepayRules() KeyRules {
	return KeyRules{Provider: "coinepay", Required: true, MaxLen: 128, Charset: coinepayCharset, Window: DefaultKeyWindow}
}

func TestKeyRules(t *testing.T) {
	a55, cp := a55Rules(), coinepayRules()
	cases := []struct {
		name  string
		rules KeyRules
		key   string
		want  error
	}{
		{"a55 uuid", a55, "550e8400-e29b-41d4-a716-446655440000", nil},
		{"a55 empty is allowed", a55, "", nil},
		{"a55 15 chars", a55, strings.Repeat("a", 15), ErrKeyTooShort},
		{"a55 16 chars", a55, strings.Repeat("a", 16), nil},
		{"a55 128 chars", a55, strings.Repeat("a", 128), nil},
		{"a55 129 chars", a55, strings.Repeat("a", 129), ErrKeyTooLong},
		{"a55 space", a55, "abcdefgh ijklmnopq", ErrKeyInvalidChars},
		{"a55 non-ascii", a55, "abcdefghijklmnopé", ErrKeyInvalidChars},
		{"coinepay empty", cp, "", ErrKeyRequired},
		{"coinepay short ok", cp, "k1", nil},
		{"coinepay task key", cp, "openapi:apply:42", nil},
		{"coinepay all charset", cp, coinepayCharset, nil},
		{"coinepay 129", cp, strings.Repeat("a", 129), ErrKeyTooLong},
		{"coinepay slash", cp, "a/b", ErrKeyInvalidChars},
		{"coinepay plus", cp, "a+b", ErrKeyInvalidChars},
		{"coinepay newline", cp, "a\nb", ErrKeyInvalidChars},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rules.Validate(tc.key)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			var ke *KeyError
			require.True(t, errors.As(err, &ke))
			assert.NotEmpty(t, ke.Rule, "the error names the rule")
			assert.Contains(t, err.Error(), tc.rules.Provider)
		})
	}
}

func TestNewKeyIsUUIDv4(t *testing.T) {
	k, err := NewKey()
	require.NoError(t, err)
	u, err := uuid.Parse(k)
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(4), u.Version())
	require.NoError(t, a55Rules().Validate(k))
	require.NoError(t, coinepayRules().Validate(k))
}

func TestTaskKey(t *testing.T) {
	assert.Equal(t, "openapi:apply:42", TaskKey("openapi:apply", "42"))
	assert.Equal(t, "42", TaskKey("", "42"))
	assert.Equal(t, TaskKey("openapi:apply", "42"), TaskKey("openapi:apply", "42"), "deterministic")
}

func TestContextKey(t *testing.T) {
	ctx := context.Background()
	_, _, ok := KeyFromContext(ctx)
	assert.False(t, ok)
	ctx = WithKey(ctx, "order-1234567890abcdef")
	k, created, ok := KeyFromContext(ctx)
	assert.True(t, ok)
	assert.Equal(t, "order-1234567890abcdef", k)
	assert.True(t, created.IsZero())
	at := time.Unix(1767225600, 0)
	k, created, _ = KeyFromContext(WithKeyCreatedAt(ctx, "k2", at))
	assert.Equal(t, "k2", k)
	assert.Equal(t, at, created)
}

func TestResolveKeyPrecedence(t *testing.T) {
	now := time.Unix(1767225600, 0)
	ctx := WithKeyCreatedAt(context.Background(), "ctx-key", now.Add(-time.Hour))
	k, created, err := resolveKey(ctx, []CallOption{WithIdempotencyKey("opt-key")}, now)
	require.NoError(t, err)
	assert.Equal(t, "opt-key", k, "a per-call option wins")
	assert.Equal(t, now, created, "the context's creation time belongs to the context's key")
	k, created, err = resolveKey(ctx, nil, now)
	require.NoError(t, err)
	assert.Equal(t, "ctx-key", k)
	assert.Equal(t, now.Add(-time.Hour), created)
	k, created, err = resolveKey(context.Background(), nil, now)
	require.NoError(t, err)
	assert.Len(t, k, 36)
	assert.Equal(t, now, created)
	k, _, err = resolveKey(ctx, []CallOption{WithoutKey()}, now)
	require.NoError(t, err)
	assert.Empty(t, k)
}

func TestResumeContext(t *testing.T) {
	at := time.Unix(1767225600, 0)
	err := error(&APIError{Kind: ErrRetriesExhausted, Key: "resume-me-1234567", KeyCreated: at})
	wrapped := errors.Join(errors.New("job 7 failed"), err)
	assert.Equal(t, "resume-me-1234567", KeyOf(wrapped))
	k, created, ok := KeyFromContext(ResumeContext(context.Background(), wrapped))
	require.True(t, ok)
	assert.Equal(t, "resume-me-1234567", k)
	assert.Equal(t, at, created)
	ctx := context.Background()
	assert.Equal(t, ctx, ResumeContext(ctx, errors.New("plain")))
	assert.Empty(t, KeyOf(errors.New("plain")))
}

// 100 concurrent operations get 100 distinct keys, each sent on all of its
// attempts.
func TestConcurrentOperationsGetDistinctKeys(t *testing.T) {
	rec := &recorder{statuses: []int{200}}
	c := setup(t, rec)
	var wg sync.WaitGroup
	keys := make([]string, 100)
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			meta, err := c.Do(context.Background(), postReq(), nil)
			assert.NoError(t, err)
			keys[i] = meta.Key
		}()
	}
	wg.Wait()
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	assert.Len(t, set, 100)
	assert.Len(t, rec.seen(), 100)
}

func FuzzKeyRulesValidate(f *testing.F) {
	for _, s := range []string{"", "550e8400-e29b-41d4-a716-446655440000", "openapi:apply:1", strings.Repeat("x", 200), "a b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		for _, r := range []KeyRules{a55Rules(), coinepayRules()} {
			err := r.Validate(key)
			if err == nil {
				if len(key) > r.MaxLen || (key != "" && len(key) < r.MinLen) || (r.Required && key == "") {
					t.Fatalf("%s accepted %q", r.Provider, key)
				}
				continue
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Rule == "" {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}
