package payonce

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/corekit"
)

// keyTextPrefix versions the key's text form.
const keyTextPrefix = "po1."

// maxKeyText bounds what ParseKey reads.
const maxKeyText = 1024

type keyTextJSON struct {
	K string `json:"k"`
	T int64  `json:"t"` // Unix nanoseconds
}

// MarshalText is the key's text form, for storage: "po1." and base64url
// JSON holding the value and the creation time. ParseKey and UnmarshalText
// read it back in any process. The zero Key's text form is empty.
func (k Key) MarshalText() ([]byte, error) {
	if k.IsZero() {
		return []byte{}, nil
	}
	b, _ := json.Marshal(keyTextJSON{K: k.id, T: k.created.UnixNano()})
	return []byte(keyTextPrefix + base64.RawURLEncoding.EncodeToString(b)), nil
}

// UnmarshalText decodes a text form made by MarshalText (see ParseKey); an
// empty text gives the zero Key, which WithKey refuses.
func (k *Key) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*k = Key{}
		return nil
	}
	v, err := ParseKey(string(text))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// ParseKey decodes a key's text form (MarshalText). A malformed or empty
// text is a *ValidationError (ErrInvalidRequest) that never quotes it.
func ParseKey(s string) (Key, error) {
	bad := func(reason string) (Key, error) {
		return Key{}, invalid(ErrInvalidRequest, "key text", reason)
	}
	if len(s) > maxKeyText {
		return bad("too long")
	}
	raw, ok := strings.CutPrefix(s, keyTextPrefix)
	if !ok {
		return bad("unknown format or version")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return bad("not base64url")
	}
	var v keyTextJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return bad("not a key")
	}
	if v.K == "" || len(v.K) > 255 || !corekit.Printable(v.K) {
		return bad("bad key")
	}
	if v.T <= 0 {
		return bad("bad creation time")
	}
	return Key{id: v.K, created: keyTime(time.Unix(0, v.T))}, nil
}
