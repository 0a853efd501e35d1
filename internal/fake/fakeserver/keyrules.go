package fakeserver

import (
	"strconv"
	"strings"
	"time"
)

// Header names the fakes read and write. The fakes spell them out
// themselves rather than borrowing the client's constants, so that a wrong
// client constant shows up as a failing test instead of being mirrored.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplay         = "X-Idempotent-Replay"
)

// KeyRules are the Idempotency-Key rules a fake enforces, written down
// from the providers' documents independently of the client's own rules.
type KeyRules struct {
	Required bool          // a keyed route without a key answers ProblemKeyRequired
	MinLen   int           // minimum length in bytes, 0 for none
	MaxLen   int           // maximum length in bytes, 0 for none
	Charset  string        // allowed bytes; "" allows printable ASCII without spaces
	Window   time.Duration // how long the server remembers a key (default 24 h)
}

// Check returns ProblemNone when key obeys the rules, or the problem and a
// short description of the rule broken (never the key itself).
func (r KeyRules) Check(key string) (Problem, string) {
	if key == "" {
		if r.Required {
			return ProblemKeyRequired, "an Idempotency-Key is required"
		}
		return ProblemNone, ""
	}
	if r.MinLen > 0 && len(key) < r.MinLen {
		return ProblemKeyTooShort, "at least " + strconv.Itoa(r.MinLen) + " characters, got " + strconv.Itoa(len(key))
	}
	if r.MaxLen > 0 && len(key) > r.MaxLen {
		return ProblemKeyTooLong, "at most " + strconv.Itoa(r.MaxLen) + " characters, got " + strconv.Itoa(len(key))
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		ok := c > ' ' && c < 0x7f
		if ok && r.Charset != "" {
			ok = strings.IndexByte(r.Charset, c) >= 0
		}
		if !ok {
			return ProblemKeyInvalidChars, "bad byte at position " + strconv.Itoa(i)
		}
	}
	return ProblemNone, ""
}
