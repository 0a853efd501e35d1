package payonce_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cardBody(number, cvv, amount string) []byte {
	return []byte(`{"amount":"` + amount + `","card":{"number":"` + number + `","cvv":"` + cvv + `","holder_name":"TEST"}}`)
}

// Without a key the fingerprint is a digest of the body as the journal
// stores it: no card digit beyond the last four, no CVV; with a key it
// is an HMAC, which tells every card apart and which nobody without the
// key can recompute.
func TestFingerprintForms(t *testing.T) {
	a := cardBody("4111111111111111", "987", "10.00")
	sameLast4 := cardBody("4012888888071111", "123", "10.00")
	otherAmount := cardBody("4111111111111111", "987", "99.00")

	fp := corekit.Fingerprint("post", "/charge/", a)
	assert.True(t, strings.HasPrefix(fp, "sha256-redacted:"), fp)
	assert.Equal(t, fp, corekit.Fingerprint("POST", "/charge/", sameLast4), "the hidden digits and the CVV are not in it")
	assert.NotEqual(t, fp, corekit.Fingerprint("POST", "/charge/", otherAmount))
	assert.NotEqual(t, fp, corekit.Fingerprint("POST", "/charge/other", a))
	plain := sha256.Sum256([]byte("POST\x00/charge/\x00" + string(a)))
	assert.NotContains(t, fp, hex.EncodeToString(plain[:])[:16])

	keyed := func(key string) *payonce.Client {
		c, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithFingerprintKey([]byte(key)))
		require.NoError(t, err)
		return c
	}
	k1 := keyed("key-one").Fingerprint("POST", "/charge/", a)
	assert.True(t, strings.HasPrefix(k1, "hmac-sha256:"), k1)
	assert.Len(t, strings.TrimPrefix(k1, "hmac-sha256:"), 64)
	assert.Equal(t, k1, keyed("key-one").Fingerprint("POST", "/charge/", a), "one key, one fingerprint in every process")
	assert.NotEqual(t, k1, keyed("key-two").Fingerprint("POST", "/charge/", a))
	assert.NotEqual(t, k1, keyed("key-one").Fingerprint("POST", "/charge/", sameLast4), "another card is told apart")

	unkeyed, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"))
	require.NoError(t, err)
	assert.Equal(t, fp, unkeyed.Fingerprint("POST", "/charge/", a))

	_, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithFingerprintKey(nil))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
}

// A keyed client refuses another card under a recorded reference, even
// one with the same last four digits, and sends nothing; a client without
// a key refuses another amount or last four.
func TestAnotherCardUnderTheSameReference(t *testing.T) {
	card := func(number, cvv, amount string) *payonce.Request {
		return &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/charge/", Keyed: true,
			Body: map[string]any{"amount": amount, "card": map[string]string{"number": number, "cvv": cvv}}}
	}
	for name, tc := range map[string]struct {
		key  []payonce.Option
		next *payonce.Request
	}{
		"keyed, same last four":    {[]payonce.Option{payonce.WithFingerprintKey([]byte("a merchant's secret"))}, card("4012888888071111", "123", "10.00")},
		"keyed, another CVV":       {[]payonce.Option{payonce.WithFingerprintKey([]byte("a merchant's secret"))}, card("4111111111111111", "123", "10.00")},
		"no key, other last four":  {nil, card("5555555555554444", "987", "10.00")},
		"no key, another amount":   {nil, card("4111111111111111", "987", "99.00")},
		"keyed, another amount":    {[]payonce.Option{payonce.WithFingerprintKey([]byte("a merchant's secret"))}, card("4111111111111111", "987", "99.00")},
		"no key, another path too": {nil, &payonce.Request{Operation: "x", Method: http.MethodPost, Path: "/other/", Keyed: true, Body: map[string]string{}}},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			c := journalClient(t, s, journal.NewMemory(), newClock(), tc.key...)
			_, err := c.Do(t.Context(), card("4111111111111111", "987", "10.00"), nil, payonce.WithReference("order-1/charge"))
			require.NoError(t, err)
			_, err = c.Do(t.Context(), tc.next, nil, payonce.WithReference("order-1/charge"))
			require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
			assert.EqualValues(t, 1, s.calls.Load(), "nothing sent for the other request")
		})
	}
}

// An entry reserved with corekit.Fingerprint (the form without a key)
// still checks the body of a keyed client's run.
func TestReservedRedactedFingerprintChecksAKeyedRun(t *testing.T) {
	s := newStub(t, okCharge)
	j := journal.NewMemory()
	clk := newClock()
	_, _, err := j.Reserve(t.Context(), payonce.JournalEntry{Scope: "a55:client-1", Reference: "order-5", Operation: "charges.create",
		Method: "POST", Path: "/charge/", Key: "reserved-key-order-5", KeyCreated: clk.Now(),
		Fingerprint: corekit.Fingerprint("POST", "/charge/", []byte(`{"amount":"10.00"}`)), State: payonce.JournalPending,
		CreatedAt: clk.Now(), UpdatedAt: clk.Now()})
	require.NoError(t, err)
	c := journalClient(t, s, j, clk, payonce.WithFingerprintKey([]byte("k")))
	_, err = c.Do(t.Context(), chargeReq("99.00"), nil, payonce.WithReference("order-5"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	_, err = c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-5"))
	require.NoError(t, err)
	assert.Equal(t, []string{"reserved-key-order-5"}, s.sentKeys())
}

// RequestMatches compares a request with an entry in the entry's own
// fingerprint form, or by method and path for an entry without one.
func TestRequestMatches(t *testing.T) {
	body := cardBody("4111111111111111", "987", "10.00")
	keyed, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithFingerprintKey([]byte("k")))
	require.NoError(t, err)
	own := payonce.JournalEntry{Method: "POST", Path: "/charge/", Fingerprint: keyed.Fingerprint("POST", "/charge/", body)}
	assert.True(t, keyed.RequestMatches(own, "POST", "/charge/", body))
	assert.False(t, keyed.RequestMatches(own, "POST", "/charge/", cardBody("4012888888071111", "987", "10.00")))
	redacted := payonce.JournalEntry{Method: "POST", Path: "/charge/", Fingerprint: corekit.Fingerprint("POST", "/charge/", body)}
	assert.True(t, keyed.RequestMatches(redacted, "POST", "/charge/", body))
	assert.False(t, keyed.RequestMatches(redacted, "POST", "/charge/", cardBody("4111111111111111", "987", "11.00")))
	bare := payonce.JournalEntry{Method: "POST", Path: "/charge/"}
	assert.True(t, keyed.RequestMatches(bare, "post", "/charge/", body))
	assert.False(t, keyed.RequestMatches(bare, "POST", "/other/", body))
	assert.False(t, keyed.RequestMatches(payonce.JournalEntry{Fingerprint: "e3b0c44298fc1c149afbf4c8996fb924"}, "POST", "/charge/", body),
		"a fingerprint of no known form matches nothing")
}

// plainFingerprint is the form payonce recorded before fingerprints were
// keyed: the hex SHA-256 of method, path and body, no prefix.
func plainFingerprint(method, path string, body []byte) string {
	sum := sha256.Sum256([]byte(method + "\x00" + path + "\x00" + string(body)))
	return hex.EncodeToString(sum[:])
}

// plainEntry reserves order-1 as an earlier payonce recorded it: its key
// and a plain fingerprint of body; succeeded with the stub's answer when
// result is not nil.
func plainEntry(t *testing.T, j *journal.Memory, clk *clock, body string, result []byte) payonce.JournalEntry {
	t.Helper()
	e := payonce.JournalEntry{Scope: "a55:client-1", Reference: "order-1", Operation: "charges.create",
		Method: "POST", Path: "/charge/", Key: "key-of-an-old-version-1", KeyCreated: clk.Now(),
		Fingerprint: plainFingerprint("POST", "/charge/", []byte(body)), State: payonce.JournalPending,
		Sent: true, Attempts: 1, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
	_, _, err := j.Reserve(t.Context(), e)
	require.NoError(t, err)
	if result != nil {
		e.State, e.Result, e.StatusCode = payonce.JournalSucceeded, result, 200
		require.NoError(t, j.Update(t.Context(), e))
	}
	got, err := j.Get(t.Context(), e.Scope, e.Reference)
	require.NoError(t, err)
	return got
}

// An earlier payonce's plain fingerprint is verified in its own form once,
// then replaced with the client's: a settled entry answers from the
// journal, a pending one resumes with its key, another body is still a
// conflict (and leaves the row as it was).
func TestPlainFingerprintIsVerifiedOnceThenReplaced(t *testing.T) {
	const body = `{"amount":"10.00"}`
	keyed := []payonce.Option{payonce.WithFingerprintKey([]byte("k"))}
	for name, tc := range map[string]struct {
		result []byte
		opts   []payonce.Option
		form   string
	}{
		"settled, keyed client":   {result: []byte(`{"id":"ch_old","status":"confirmed"}`), opts: keyed, form: "hmac-sha256:"},
		"pending, keyed client":   {opts: keyed, form: "hmac-sha256:"},
		"settled, unkeyed client": {result: []byte(`{"id":"ch_old","status":"confirmed"}`), form: "sha256-redacted:"},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStub(t, okCharge)
			j, clk := journal.NewMemory(), newClock()
			was := plainEntry(t, j, clk, body, tc.result)
			c := journalClient(t, s, j, clk, tc.opts...)

			_, err := c.Do(t.Context(), chargeReq("99.00"), nil, payonce.WithReference("order-1"))
			require.ErrorIs(t, err, payonce.ErrIdempotencyConflict, "another body")
			got, err := j.Get(t.Context(), was.Scope, "order-1")
			require.NoError(t, err)
			assert.Equal(t, was.Fingerprint, got.Fingerprint, "a conflict changes nothing")

			var out chargeOut
			m, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("order-1"))
			require.NoError(t, err)
			if tc.result != nil {
				assert.True(t, m.FromJournal)
				assert.Equal(t, "ch_old", out.ID)
				assert.Zero(t, s.calls.Load())
			} else {
				assert.Equal(t, []string{"key-of-an-old-version-1"}, s.sentKeys(), "resumed with its key")
			}
			got, err = j.Get(t.Context(), was.Scope, "order-1")
			require.NoError(t, err)
			assert.Equal(t, c.Fingerprint("POST", "/charge/", []byte(body)), got.Fingerprint)
			assert.True(t, strings.HasPrefix(got.Fingerprint, tc.form), got.Fingerprint)
			assert.Equal(t, was.Key, got.Key)
		})
	}
}

// A settle lookup's request check (View.RequestMatches) verifies a plain
// fingerprint too, and replaces it.
func TestRequestMatchesReplacesAPlainFingerprint(t *testing.T) {
	const body = `{"amount":"10.00"}`
	j, clk := journal.NewMemory(), newClock()
	was := plainEntry(t, j, clk, body, nil)
	c := journalClient(t, newStub(t, okCharge), j, clk, payonce.WithFingerprintKey([]byte("k")))
	assert.False(t, c.RequestMatches(was, "POST", "/charge/", []byte(`{"amount":"11.00"}`)))
	assert.True(t, c.RequestMatches(was, "POST", "/charge/", []byte(body)))
	got, err := j.Get(t.Context(), was.Scope, was.Reference)
	require.NoError(t, err)
	assert.Equal(t, c.Fingerprint("POST", "/charge/", []byte(body)), got.Fingerprint)
}

// A journal that cannot replace fingerprints keeps the plain form, still
// compared in that form.
func TestPlainFingerprintWithoutAJournalUpgrader(t *testing.T) {
	const body = `{"amount":"10.00"}`
	j, clk := journal.NewMemory(), newClock()
	was := plainEntry(t, j, clk, body, nil)
	s := newStub(t, okCharge)
	c := journalClient(t, s, plainJournal{j}, clk, payonce.WithFingerprintKey([]byte("k")))
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"key-of-an-old-version-1"}, s.sentKeys())
	got, err := j.Get(t.Context(), was.Scope, was.Reference)
	require.NoError(t, err)
	assert.Equal(t, was.Fingerprint, got.Fingerprint)
	assert.Equal(t, payonce.JournalSucceeded, got.State)
}

// lostReplace is a journal on which another process, with the same
// fingerprint key, replaces a plain fingerprint just before this client
// does: this client's compare-and-swap finds the plain form gone.
type lostReplace struct{ *journal.Memory }

func (l lostReplace) ReplaceFingerprint(ctx context.Context, scope, reference, old, fp string) (bool, error) {
	if _, err := l.Memory.ReplaceFingerprint(ctx, scope, reference, old, fp); err != nil {
		return false, err
	}
	return l.Memory.ReplaceFingerprint(ctx, scope, reference, old, fp)
}

// Two upgraded workers resume one entry of an earlier payonce at once
// (a job delivered twice): both verify its plain fingerprint, one
// replaces it first. The other is the same request under the same
// fingerprint key, so it resumes (or answers) as well; it is no
// conflict, which a caller reads as a bug and never retries.
func TestPlainFingerprintReplacedMeanwhileIsNoConflict(t *testing.T) {
	const body = `{"amount":"10.00"}`
	j, clk := journal.NewMemory(), newClock()
	plainEntry(t, j, clk, body, nil)
	s := newStub(t, okCharge)
	c := journalClient(t, s, lostReplace{j}, clk, payonce.WithFingerprintKey([]byte("k")))
	_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("order-1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"key-of-an-old-version-1"}, s.sentKeys(), "resumed with its key")
}

// Fingerprints are compared in constant time wherever Go compares them
// (crypto/subtle, hmac.Equal): a comparison that stops at the first
// differing byte tells a caller who can time it how much of a stored
// fingerprint it guessed. The test reads every source file of the module
// (tests aside, and the fake providers, whose fingerprints are their own
// requests') and refuses == and != between fingerprints; a test against
// the empty string (is there one) reveals nothing of its bytes.
func TestFingerprintsAreComparedInConstantTime(t *testing.T) {
	fingerprint := func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.SelectorExpr:
			return strings.Contains(strings.ToLower(x.Sel.Name), "fingerprint")
		case *ast.Ident:
			return x.Name == "fp" || strings.Contains(strings.ToLower(x.Name), "fingerprint")
		}
		return false
	}
	empty := func(x ast.Expr) bool {
		lit, ok := x.(*ast.BasicLit)
		return ok && lit.Kind == token.STRING && (lit.Value == `""` || lit.Value == "``")
	}
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (d.Name() == "testdata" || d.Name() == "bench" || strings.HasPrefix(d.Name(), ".") || path == filepath.Join("internal", "fake")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			b, ok := n.(*ast.BinaryExpr)
			if ok && (b.Op == token.EQL || b.Op == token.NEQ) && (fingerprint(b.X) || fingerprint(b.Y)) && !empty(b.X) && !empty(b.Y) {
				found = append(found, fset.Position(b.Pos()).String())
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "fingerprints compared with == or !=")
}
