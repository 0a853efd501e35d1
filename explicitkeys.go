package payonce

// WithExplicitKeys makes the client refuse a keyed write (a charge, a
// capture, a refund, a cancel, a wallet, a card apply or recharge) unless
// the call names its key in a way that survives a redelivery:
//
//   - a key: WithKey(k), k from NewKey(job.CreatedAt, parts...), from
//     KeyOf(err) or Meta.Key, or read back from storage by ParseKey;
//   - a reference on a client with a journal: WithReference(ref).
//
// Anything else (no key at all, so a random UUID; WithoutKey) is refused
// with an *APIError of kind ErrKeyRequired, whose cause is a *ValidationError,
// before anything is written to a journal or sent. A job that forgets its
// key then fails on its first delivery instead of issuing a second card
// or charge on each redelivery. Reads are never affected.
func WithExplicitKeys() Option {
	return option(func(c *Client) error { c.explicitKeys = true; return nil })
}

// checkExplicitKey refuses, under WithExplicitKeys, a keyed call whose key
// has no explicit source. It runs after resolveKey.
func (c *Client) checkExplicitKey(o *callOptions) error {
	if !c.explicitKeys || o.hasReference || o.keySet {
		return nil
	}
	const rule = "WithExplicitKeys: a keyed write needs a key (WithKey) or a reference with a journal"
	if o.noKey {
		return &ValidationError{Reason: rule + "; WithoutKey is refused", Err: ErrKeyRequired}
	}
	return &ValidationError{Reason: rule + "; the call gave no key", Err: ErrKeyRequired}
}
