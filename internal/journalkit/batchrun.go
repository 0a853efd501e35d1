package journalkit

import (
	"context"
	"errors"

	"github.com/payonce/payonce"
)

// Verdict reports whether err, returned by one write of a batch, is the
// write's own answer that changed nothing (ErrJournalNotFound,
// ErrJournalSettled, ErrJournalFenced, ErrJournalLeased, the
// ErrIdempotencyConflict of a Take or an inbox's ErrEventHandled): the
// transaction goes on for the other
// writes. Any other error may have left the transaction unusable, so the
// backend rolls it back and runs each write in its own transaction.
func Verdict(err error) bool {
	for _, k := range []error{payonce.ErrJournalNotFound, payonce.ErrJournalSettled, payonce.ErrJournalFenced,
		payonce.ErrJournalLeased, payonce.ErrIdempotencyConflict, payonce.ErrEventHandled} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// RunBatch is the batch algorithm both SQL backends share. begin opens a
// transaction; write runs one item's write in it; commit commits it and
// rollback abandons it; alone runs one item in a transaction of its own.
// Items whose context ended before their turn get the context's error and
// write nothing. When a write fails with an error Verdict does not accept,
// the transaction is rolled back and every item runs alone, so one item's
// failure never fails or undoes another's. A commit failure is returned to
// every item the transaction held.
func RunBatch[T any, Tx any](ctx context.Context, items []BatchItem[T],
	begin func(ctx context.Context) (Tx, error),
	write func(ctx context.Context, tx Tx, w T) error,
	commit func(ctx context.Context, tx Tx) error,
	rollback func(tx Tx),
	alone func(ctx context.Context, w T) error,
) []error {
	errs := make([]error, len(items))
	runAlone := func() []error {
		for i, it := range items {
			if err := it.Ctx.Err(); err != nil {
				errs[i] = err
				continue
			}
			errs[i] = alone(ctx, it.Write)
		}
		return errs
	}
	if len(items) == 1 {
		return runAlone()
	}
	tx, err := begin(ctx)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	held := false
	for i, it := range items {
		if err := it.Ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if err := write(ctx, tx, it.Write); err != nil {
			if !Verdict(err) {
				rollback(tx)
				clear(errs)
				return runAlone()
			}
			errs[i] = err
			continue
		}
		held = true
	}
	if !held {
		rollback(tx)
		return errs
	}
	if err := commit(ctx, tx); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}
