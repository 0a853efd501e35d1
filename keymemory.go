package payonce

import (
	"sync"
	"time"
)

// MaxRememberedKeys is how many keys given without a creation time a
// client remembers the first use of (see keyMemory). Past it the oldest
// remembered key is forgotten, and counts as new if it comes again: a key
// that must outlive that use a journal, a resume token or a task key.
const MaxRememberedKeys = 1 << 15

// keyMemory remembers, in bounded memory, when the client first used each
// key it was given without a creation time (a bare WithIdempotencyKey or
// WithKey), so that the same key given again past the window is refused
// (ErrKeyExpired) instead of going out as new. It holds at most
// MaxRememberedKeys keys, forgetting the first remembered first.
type keyMemory struct {
	mu    sync.Mutex
	first map[string]time.Time
	ring  []string // keys in the order they were remembered
	next  int      // the ring slot the next key takes
	limit int
}

func newKeyMemory(limit int) *keyMemory {
	return &keyMemory{first: make(map[string]time.Time), limit: limit}
}

// firstUse returns when key was first used: the remembered time, or now,
// remembered from then on.
func (m *keyMemory) firstUse(key string, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.first[key]; ok {
		return t
	}
	if len(m.ring) < m.limit {
		m.ring = append(m.ring, key)
	} else {
		delete(m.first, m.ring[m.next])
		m.ring[m.next] = key
	}
	m.next = (m.next + 1) % m.limit
	m.first[key] = now
	return now
}

// len is how many keys are remembered.
func (m *keyMemory) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.first)
}
