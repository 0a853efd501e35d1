package corekit

import (
	"context"
	"net/http"
)

type rejectedRequestKey struct{}

// WithRejectedRequest returns ctx holding r, the signed request (headers
// as sent) whose answer a signer's Recover is asked to mend.
func WithRejectedRequest(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, rejectedRequestKey{}, r)
}

// RejectedRequest returns the signed request (headers as sent) whose
// answer a signer's Recover is asked to mend, when ctx is the one the
// client passes to Recover.
func RejectedRequest(ctx context.Context) (*http.Request, bool) {
	r, ok := ctx.Value(rejectedRequestKey{}).(*http.Request)
	return r, ok && r != nil
}
