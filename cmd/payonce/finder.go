package main

import (
	"context"
	"fmt"

	"github.com/payonce/payonce"
)

// Holders passes payonce.JournalFinder on from the journal the handle
// holds: a settle by lookup asks it which entry holds a payment.
func (h *journalHandle) Holders(ctx context.Context, scope, resourceID string) ([]payonce.JournalEntry, error) {
	f, err := h.finder()
	if err != nil {
		return nil, err
	}
	return f.Holders(ctx, scope, resourceID)
}

// LookAlikes passes payonce.JournalFinder on from the journal the handle
// holds.
func (h *journalHandle) LookAlikes(ctx context.Context, q payonce.LookAlikeQuery) ([]payonce.JournalEntry, error) {
	f, err := h.finder()
	if err != nil {
		return nil, err
	}
	return f.LookAlikes(ctx, q)
}

func (h *journalHandle) finder() (payonce.JournalFinder, error) {
	f, ok := h.Store.(payonce.JournalFinder)
	if !ok {
		return nil, fmt.Errorf("%w: %T", payonce.ErrLookupUnsupported, h.Store)
	}
	return f, nil
}
