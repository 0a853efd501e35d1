package retrytest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/payonce/payonce"
)

// Waits collects the wait of every retry a client decided. Safe for
// concurrent use.
type Waits struct {
	mu    sync.Mutex
	waits []time.Duration
}

// New returns a Waits and the option (payonce.WithObserver) that makes a
// client report its retries to it.
func New() (*Waits, payonce.Option) {
	w := &Waits{}
	return w, payonce.WithObserver(payonce.Observer{EndAttempt: w.record})
}

func (w *Waits) record(_ context.Context, r payonce.AttemptResult) {
	if r.RetryCause == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits = append(w.waits, r.RetryWait)
}

// All returns the wait of every retry so far, in order.
func (w *Waits) All() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.waits)
}
