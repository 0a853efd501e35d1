package payonce

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
			err := validateKey(tc.rules, tc.key)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			var ke *ValidationError
			require.True(t, errors.As(err, &ke))
			assert.NotEmpty(t, ke.Reason, "the error names the rule")
			assert.Contains(t, err.Error(), tc.rules.Provider)
		})
	}
}

func TestRandomKeyIsUUIDv4(t *testing.T) {
	now := time.Unix(1767225600, 0)
	k, err := randomKey(now)
	require.NoError(t, err)
	u, err := uuid.Parse(k.String())
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(4), u.Version())
	assert.True(t, now.Equal(k.Created()), "a random key is created now")
	require.NoError(t, validateKey(a55Rules(), k.String()))
	require.NoError(t, validateKey(coinepayRules(), k.String()))
}

func TestTaskKeyValue(t *testing.T) {
	at := time.Unix(1767225600, 0)
	k, err := NewKey(at, "openapi:apply", "task-000000042")
	require.NoError(t, err)
	assert.Equal(t, "openapi:apply:task-000000042", k.String())
	again, err := NewKey(at, "openapi:apply", "task-000000042")
	require.NoError(t, err)
	assert.Equal(t, k, again, "deterministic")
}

func TestZeroKey(t *testing.T) {
	var k Key
	assert.True(t, k.IsZero())
	assert.Empty(t, k.String())
	assert.True(t, k.Created().IsZero())
	k = testKey("order-1234567890abcdef")
	assert.False(t, k.IsZero())
	assert.Equal(t, "order-1234567890abcdef", k.String())
	assert.Equal(t, "order-1234567890abcdef", k.String(), "printed, a key is its value")
	at := time.Unix(1767225600, 0)
	k = testKeyAt("k2", at)
	assert.Equal(t, "k2", k.String())
	assert.True(t, at.Equal(k.Created()))
}

func resolve(opts ...CallOption) (Key, error) {
	var o callOptions
	o.apply(opts)
	return o.resolveKey(time.Unix(1767225600, 0))
}

func TestResolveKeyPrecedence(t *testing.T) {
	now := time.Unix(1767225600, 0)
	given := testKeyAt("opt-key", now.Add(-time.Hour))
	k, err := resolve(WithKey(given))
	require.NoError(t, err)
	assert.Equal(t, "opt-key", k.String(), "the call's key")
	assert.True(t, now.Add(-time.Hour).Equal(k.Created()), "with its own creation time")
	k, err = resolve(WithKey(given), WithKey(given))
	require.NoError(t, err, "the same key twice is fine")
	assert.Equal(t, given, k)
	k, err = resolve()
	require.NoError(t, err)
	assert.Len(t, k.String(), 36)
	assert.True(t, now.Equal(k.Created()))
	k, err = resolve(WithoutKey())
	require.NoError(t, err)
	assert.True(t, k.IsZero())
}

func TestResumeWithKeyOf(t *testing.T) {
	at := time.Unix(1767225600, 0)
	err := error(&APIError{Kind: ErrRetriesExhausted, Key: testKeyAt("resume-me-1234567", at)})
	wrapped := errors.Join(errors.New("job 7 failed"), err)
	assert.Equal(t, "resume-me-1234567", KeyOf(wrapped).String())
	k, rerr := resolve(WithKey(KeyOf(wrapped)))
	require.NoError(t, rerr)
	assert.Equal(t, "resume-me-1234567", k.String())
	assert.True(t, at.Equal(k.Created()))
	assert.True(t, KeyOf(errors.New("plain")).IsZero())
	_, rerr = resolve(WithKey(KeyOf(errors.New("plain"))))
	require.ErrorIs(t, rerr, ErrKeyRequired, "an error without a key resumes nothing")
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
			keys[i] = meta.Key.String()
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
			err := validateKey(r, key)
			if err == nil {
				if len(key) > r.MaxLen || (key != "" && len(key) < r.MinLen) || (r.Required && key == "") {
					t.Fatalf("%s accepted %q", r.Provider, key)
				}
				continue
			}
			var ke *ValidationError
			if !errors.As(err, &ke) || ke.Reason == "" {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}

// A job whose key comes from a field that happens to be empty (a text
// that did not parse, an error without a key) must not run under a fresh
// random key: every redelivery would then be a new operation and charge
// again. The zero Key given explicitly is refused before sending, as
// NewKey refuses an empty part.
func TestAnExplicitZeroKeyIsRefusedBeforeSending(t *testing.T) {
	unparsed, _ := ParseKey("")
	for name, k := range map[string]Key{
		"zero Key":           {},
		"text that is empty": unparsed,
		"error without key":  KeyOf(errors.New("plain")),
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			c := setup(t, rec)
			_, err := c.Do(t.Context(), postReq(), nil, WithKey(k))
			require.ErrorIs(t, err, ErrKeyRequired)
			var ke *ValidationError
			assert.ErrorAs(t, err, &ke)
			assert.False(t, IsResumable(err))
			assert.Empty(t, rec.seen(), "nothing is sent")
		})
	}
}

// WithoutKey together with a key is a contradiction: the operation would go
// out unprotected although the caller named its key.
func TestWithoutKeyAndAKeyTogetherAreRefused(t *testing.T) {
	rec := &recorder{}
	c := setup(t, rec)
	_, err := c.Do(t.Context(), postReq(), nil, WithoutKey(), WithKey(testKey("k-0123456789abcdef")))
	require.ErrorIs(t, err, ErrInvalidRequest)
	assert.Empty(t, rec.seen(), "nothing is sent")

	// WithoutKey alone still sends without a key where keys are optional.
	c = setup(t, rec, WithTestKeyRules(a55Rules()))
	_, err = c.Do(t.Context(), postReq(), nil, WithoutKey())
	require.NoError(t, err)
	require.Len(t, rec.seen(), 1)
	assert.Empty(t, rec.seen()[0].Key)
}

// A key refused by the provider's rules gives an *APIError whose Kind is
// the rule's sentinel (not nil), so its text, its journal kind name and
// observers name the rule that was broken.
func TestRefusedKeyErrorKindIsTheRule(t *testing.T) {
	c, err := NewClient(WithBaseURL("https://api.example"), WithTestKeyRules(a55Rules()))
	require.NoError(t, err)
	for key, kind := range map[string]error{
		"short":                 ErrKeyTooShort,
		"has spaces in the key": ErrKeyInvalidChars,
	} {
		_, err := c.Do(context.Background(), &Request{Operation: "things.create", Method: "POST", Path: "/x", Keyed: true}, nil, WithKey(testKey(key)))
		var e *APIError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, kind, e.Kind, key)
		assert.Equal(t, KindName(kind), outcome(err), key)
		assert.ErrorIs(t, err, ErrInvalidRequest, key)
	}
}

// A job that failed resumes with the key its error carries (KeyOf): the
// key's age comes with it, so the key-age guard cannot take a 25-hour-old
// key for a new one and send it to a server that forgot it, which would
// charge a second time.
func TestResumedKeyKeepsItsAge(t *testing.T) {
	now := time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)
	first := now.Add(-25 * time.Hour)
	failed := &APIError{Kind: ErrRetriesExhausted, Err: ErrServer, Key: testKeyAt("order:5:payment-key", first)}

	var o callOptions
	o.apply([]CallOption{WithKey(KeyOf(failed))})
	key, err := o.resolveKey(now)
	require.NoError(t, err)
	assert.Equal(t, "order:5:payment-key", key.String())
	assert.True(t, first.Equal(key.Created()), "the age of the resumed key")

	// Another key is another operation, with its own age.
	later := now.Add(-time.Hour)
	o = callOptions{}
	o.apply([]CallOption{WithKey(testKeyAt("order:6:payment-key", later))})
	key, err = o.resolveKey(now)
	require.NoError(t, err)
	assert.Equal(t, "order:6:payment-key", key.String())
	assert.True(t, later.Equal(key.Created()))
}

// End to end: the guard refuses the resumed key before anything is sent.
func TestResumePastTheWindowIsRefused(t *testing.T) {
	rec := &recorder{}
	now := time.Now()
	c := setup(t, rec, WithClock(func() time.Time { return now }))
	failed := &APIError{Kind: ErrRetriesExhausted, Err: ErrServer, Key: testKeyAt("order:5:payment-key", now.Add(-25*time.Hour))}
	_, err := c.Do(t.Context(), postReq(), nil, WithKey(KeyOf(failed)))
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrKeyExpired), "%v", err)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Empty(t, rec.attempts, "nothing is sent")
}

// A Key that has a value but no creation time (the key of a journal entry
// reserved without KeyCreated) is refused before anything is sent, as
// NewKey refuses a zero time: under a client without a window it would
// be sent with no age, under one with a window refused as too old.
func TestWithKeyRefusesAKeyWithoutItsAge(t *testing.T) {
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent++
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	k := JournalEntry{Key: "order-1234567890abcdef"}.IdempotencyKey()
	require.False(t, k.IsZero())
	for _, rules := range []KeyRules{{}, a55Rules()} {
		c, err := NewClient(WithBaseURL(srv.URL), WithTestKeyRules(rules))
		require.NoError(t, err)
		_, err = c.Do(t.Context(), &Request{Operation: "x", Method: http.MethodPost, Path: "/x", Body: map[string]string{"a": "b"}, Keyed: true},
			nil, WithKey(k))
		require.ErrorIs(t, err, ErrInvalidRequest, rules.Provider)
		assert.NotErrorIs(t, err, ErrKeyExpired, rules.Provider)
	}
	assert.Zero(t, sent)
}
