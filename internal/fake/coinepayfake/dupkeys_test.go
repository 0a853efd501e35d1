package coinepayfake

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// A body with an object key twice (compared case-insensitively, at any
// depth) is refused with 400 openapi_invalid_json before anything runs.
func TestCoinepayDuplicateObjectKeysAreRefused(t *testing.T) {
	e := fakeserver.New(fakeserver.Options{})
	f := New(e, Config{})
	srv := httptest.NewServer(f.Handler())
	defer srv.Close()
	send := func(key, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+PathApply, bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		signRequest(t, req, "demo-key", "demo-secret", []byte(body), e.Clock().Now())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out struct {
			MessageKey string `json:"message_key"`
		}
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out.MessageKey
	}
	for i, body := range []string{
		`{"header_id":"h","package_id":"p","Package_ID":"q"}`,
		`{"Package_ID":"q","header_id":"h","package_id":"p"}`,
		`{"header_id":"h","package_id":"p","extra":{"x":1,"X":2}}`,
	} {
		key := "dup-" + string(rune('a'+i))
		status, code := send(key, body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.Equal(t, "openapi_invalid_json", code, body)
		assert.Zero(t, e.Ledger().Count(key), "nothing executed")
	}
	status, _ := send("dup-ok", `{"header_id":"h","package_id":"p"}`)
	assert.Equal(t, http.StatusOK, status)
}
