package a55fake

// The engine's MaxOperations cap (fakepay -max-operations) bounds the
// A55 fake's tables as it bounds the ledger and the idempotency store: the
// oldest charges and the oldest wallets created on request are dropped.
// An evicted charge answers 404 to get, capture, refund and cancel and
// leaves the list; an evicted wallet answers 404 as a list filter or a
// charge's wallet_uuid. Nothing runs twice: a repeated key is answered by
// the idempotency store (in full, or 409 once only its marker is left),
// never by these tables. A client's default wallet is never dropped.

// addChargeLocked stores a new charge and drops the oldest ones over the
// cap; f.mu is held.
func (f *Fake) addChargeLocked(c *charge) {
	f.charges[c.UUID] = c
	f.chargeOrder = append(f.chargeOrder, c)
	max := f.e.MaxOperations()
	if max <= 0 || len(f.chargeOrder) <= max {
		return
	}
	drop := len(f.chargeOrder) - max
	for _, old := range f.chargeOrder[:drop] {
		delete(f.charges, old.UUID)
	}
	clear(f.chargeOrder[:drop]) // the backing array's head is freed when append next grows it
	f.chargeOrder = f.chargeOrder[drop:]
}

// addWalletLocked stores a wallet created on request and drops the oldest
// such wallets over the cap; f.mu is held.
func (f *Fake) addWalletLocked(w *wallet) {
	f.wallets[w.UUID] = w
	f.walletOrder = append(f.walletOrder, w.UUID)
	max := f.e.MaxOperations()
	if max <= 0 || len(f.walletOrder) <= max {
		return
	}
	drop := len(f.walletOrder) - max
	for _, id := range f.walletOrder[:drop] {
		delete(f.wallets, id)
	}
	clear(f.walletOrder[:drop])
	f.walletOrder = f.walletOrder[drop:]
}
