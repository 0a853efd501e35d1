package corekit

import "time"

// DefaultKeyWindow is how long both providers remember a key.
const DefaultKeyWindow = 24 * time.Hour

// KeyRules are a provider's rules for Idempotency-Key values. They are plain
// values: copy and adjust them for a deployment whose rules differ.
type KeyRules struct {
	Provider string        // used in error messages
	Required bool          // the server refuses a keyed endpoint without a key
	MinLen   int           // minimum length in bytes, 0 for none
	MaxLen   int           // maximum length in bytes, 0 for none
	Charset  string        // allowed characters; "" allows printable ASCII without spaces
	Window   time.Duration // how long the server remembers a key
}

// DefaultKeyRules are the rules of a client given none (WithKeyRules): a
// key of at most 255 bytes of printable ASCII, remembered for 24 hours,
// the window of both providers and of most idempotent APIs. A key older
// than its window is never sent: the server may have forgotten it and
// would run the operation again.
func DefaultKeyRules() KeyRules {
	return KeyRules{MaxLen: 255, Window: DefaultKeyWindow}
}
