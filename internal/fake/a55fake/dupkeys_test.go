package a55fake_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// A body with an object key twice (compared case-insensitively, at any
// depth) is refused with 400 INVALID_JSON before anything runs: the
// fingerprint and Go's decoding would read it differently, and a payload
// conflict could go unseen.
func TestA55DuplicateObjectKeysAreRefused(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	for i, body := range []string{
		`{"amount":"10.00","Amount":"99.00","currency":"BRL","type_charge":"pix"}`,
		`{"Amount":"99.00","amount":"10.00","currency":"BRL","type_charge":"pix"}`,
		`{"amount":"10.00","currency":"BRL","type_charge":"pix","payer":{"name":"a","NAME":"b"}}`,
	} {
		key := "duplicate-keys-000" + string(rune('a'+i))
		r := h.do(t, http.MethodPost, chargePath, key, body)
		assert.Equal(t, http.StatusBadRequest, r.status, body)
		assert.Equal(t, "INVALID_JSON", r.code(t))
		assert.Zero(t, h.e.Ledger().Count(key), "nothing executed")
	}
	r := h.do(t, http.MethodPost, chargePath, "duplicate-keys-ok01", `{"amount":"10.00","currency":"BRL","type_charge":"pix"}`)
	assert.Equal(t, 200, r.status, "%s", r.body)
}
