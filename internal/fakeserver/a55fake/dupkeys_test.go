package a55fake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body with an object key twice (compared case-insensitively, at any
// depth) is refused with 400 INVALID_JSON before anything runs: the
// fingerprint and Go's decoding would read it differently, and a payload
// conflict could go unseen.
func TestA55DuplicateObjectKeysAreRefused(t *testing.T) {
	h := newHarness(t, nil)
	const path = "/api/v1/bank/wallet/charge/"
	for i, body := range []string{
		`{"amount":"10.00","Amount":"99.00","currency":"BRL","type_charge":"pix"}`,
		`{"Amount":"99.00","amount":"10.00","currency":"BRL","type_charge":"pix"}`,
		`{"amount":"10.00","currency":"BRL","type_charge":"pix","payer":{"name":"a","NAME":"b"}}`,
	} {
		key := "duplicate-keys-000" + string(rune('a'+i))
		req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+h.tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		var out struct {
			Error struct{ Code string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal(b, &out), string(b))
		assert.Equal(t, "INVALID_JSON", out.Error.Code)
		assert.Zero(t, h.e.Ledger().Count(key), "nothing executed")
	}
	assert.Equal(t, 200, h.post(t, path, "duplicate-keys-ok01", []byte(`{"amount":"10.00","currency":"BRL","type_charge":"pix"}`)).StatusCode)
}
