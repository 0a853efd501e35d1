package journal

// Queued returns how many writes wait in b's queue, not yet taken into a
// batch: tests wait for it instead of sleeping and hoping a goroutine has
// queued.
func Queued[T any](b *Batcher[T]) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}
