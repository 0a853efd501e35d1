package payonce

import "time"

// testKey is the key whose value is id, created now: a key a test names by
// hand, whatever the rules say of it.
func testKey(id string) Key { return Key{id: id, created: keyTime(time.Now())} }

// testKeyAt is the key whose value is id, created at created.
func testKeyAt(id string, created time.Time) Key { return Key{id: id, created: keyTime(created)} }
