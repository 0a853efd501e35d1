package payonce

import (
	"context"
	"errors"
	"time"
)

// Do runs one operation and decodes a 2xx answer into out (which may be
// nil). Every error is an *APIError carrying the operation's key. Its
// stages, each in the file of its name: prepare (key, validation, body),
// reserve (the journal entry, WithReference), send (the attempts: guard,
// pace, sign, send, read; classify decides after each one), classify
// (the final answer or failure), decode, record (the journal entry's
// outcome).
func (c *Client) Do(ctx context.Context, req *Request, out any, opts ...CallOption) (m Meta, err error) {
	if req == nil {
		return Meta{}, &APIError{Provider: c.provider, Kind: ErrInvalidRequest, Err: errors.New("nil request")}
	}
	op := c.newOperation(ctx, req, opts)
	defer func() { op.end(m, err) }()
	if m, err := op.prepare(); err != nil {
		return m, err
	}
	if op.opts.hasReference {
		if m, done, err := op.reserve(out); done {
			return m, err
		}
	}
	resp, err := op.send()
	m, err = op.classify(resp, err)
	if err == nil {
		err = op.decode(resp, out)
	}
	if op.jr != nil {
		return op.record(m, err, out)
	}
	return m, err
}

// newOperation starts an operation: its options applied, its
// observation begun.
func (c *Client) newOperation(ctx context.Context, req *Request, opts []CallOption) *operation {
	start := time.Now()
	var op *operation
	if c.observer != nil {
		oo := &observedOperation{}
		op = &oo.operation
		op.ob = &oo.ob
	} else {
		op = &operation{}
	}
	op.c, op.ctx, op.req, op.policy, op.start = c, ctx, req, c.policy, start
	if len(opts) > 0 {
		op.opts.apply(opts) // before the observer, which reports the reference's template
	}
	if c.observer != nil {
		op.startObserving()
	}
	return op
}

// end lets go of the journal entry the run held, ends the operation's
// observation and the last attempt's context.
func (op *operation) end(m Meta, err error) {
	if op.jr != nil {
		op.c.held.drop(heldKey{op.c.scope, op.jr.ref}, op.jr.fence)
	}
	if op.ob != nil {
		op.endObserving(m, err)
	}
	op.stopTimer()
}
