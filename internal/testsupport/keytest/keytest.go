package keytest

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/payonce/payonce"
)

// Key returns the key whose value is id, created at created.
func Key(tb testing.TB, id string, created time.Time) payonce.Key {
	tb.Helper()
	k, err := payonce.ParseKey(Text(tb, id, created))
	if err != nil {
		tb.Fatalf("keytest: %v", err)
	}
	return k
}

// Text is the text form (payonce.Key.MarshalText) of the key whose value
// is id, created at created, whether or not ParseKey accepts it.
func Text(tb testing.TB, id string, created time.Time) string {
	tb.Helper()
	b, err := json.Marshal(struct {
		K string `json:"k"`
		T int64  `json:"t"`
	}{id, created.UnixNano()})
	if err != nil {
		tb.Fatalf("keytest: %v", err)
	}
	return "po1." + base64.RawURLEncoding.EncodeToString(b)
}

// Now returns the key whose value is id, created now.
func Now(tb testing.TB, id string) payonce.Key {
	tb.Helper()
	return Key(tb, id, time.Now())
}
