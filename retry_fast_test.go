package payonce

import "time"

// fastRetryPolicy is payoncetest.FastRetryPolicy, which this package's
// own tests cannot import.
func fastRetryPolicy() RetryPolicy {
	p := DefaultRetryPolicy()
	p.InitialInterval = time.Millisecond
	p.MaxInterval = 5 * time.Millisecond
	p.MaxRetryAfter = 20 * time.Millisecond
	p.AttemptTimeout = 2 * time.Second
	return p
}
