package payonce

// WithExplicitKeys makes the client refuse a keyed write (a charge, a
// capture, a refund, a cancel, a wallet, a card apply or recharge) unless
// the call names its key in a way that survives a redelivery:
//
//   - a task key: WithTaskKey(ctx, prefix, jobID, job.CreatedAt);
//   - a resume token: WithResumeToken(token);
//   - an explicit key with its creation time: WithIdempotencyKey(key) with
//     WithKeyCreated(t), or WithKeyCreatedAt(ctx, key, t), or
//     ResumeContext(ctx, err);
//   - a reference on a client with a journal: WithReference(ref).
//
// Anything else (no key at all, so a random UUID; a key without its
// creation time, which another process would take as new; WithoutKey) is
// refused with an *APIError of kind ErrKeyRequired, whose cause is a
// *KeyError, before anything is written to a journal or sent. A job that
// forgets its key then fails on its first delivery instead of issuing a
// second card or charge on each redelivery. Reads are never affected.
func WithExplicitKeys() Option {
	return func(c *Client) error { c.explicitKeys = true; return nil }
}

// checkExplicitKey refuses, under WithExplicitKeys, a keyed call whose key
// has no explicit source. It runs after resolveKey.
func (c *Client) checkExplicitKey(o *callOptions) error {
	if !c.explicitKeys {
		return nil
	}
	const rule = "WithExplicitKeys: a keyed write needs a task key (WithTaskKey), a resume token, a key with its creation time (WithKeyCreated) or a reference with a journal"
	switch {
	case o.hasReference, o.tokenSet:
		return nil
	case o.noKey:
		return &KeyError{Rule: rule + "; WithoutKey is refused", Err: ErrKeyRequired}
	case o.origin == keyAgeNew:
		return &KeyError{Rule: rule + "; the call gave no key", Err: ErrKeyRequired}
	case o.origin == keyAgeBare:
		return &KeyError{Rule: rule + "; the key was given without its creation time", Err: ErrKeyRequired}
	}
	return nil
}
