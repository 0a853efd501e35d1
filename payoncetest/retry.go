package payoncetest

import (
	"time"

	"github.com/payonce/payonce"
)

// FastRetryPolicy is payonce.DefaultRetryPolicy with millisecond waits (1 ms
// doubling to 5 ms, Retry-After capped at 20 ms, 2 s per attempt), for
// tests against the fakes (a55test, coinepaytest): the same retry
// behaviour, so that a suite of fault tests runs in milliseconds.
func FastRetryPolicy() payonce.RetryPolicy {
	p := payonce.DefaultRetryPolicy()
	p.InitialInterval = time.Millisecond
	p.MaxInterval = 5 * time.Millisecond
	p.MaxRetryAfter = 20 * time.Millisecond
	p.AttemptTimeout = 2 * time.Second
	return p
}
