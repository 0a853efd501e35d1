package payonce

import "context"

// JournalUnsender is a Journal that can take back the "may have been
// sent" mark of an entry under which no byte ever left. A run marks its
// entry sent before its first byte (the reservation, or BeginAttempt);
// when it then ends without sending any (the signer failed: a token
// endpoint refused the credentials or could not be reached; the caller's
// context ended while the run waited), the client calls Unsend, so the
// entry is never read as in doubt and a later call resumes it with its
// key. A crash between the mark and Unsend leaves the entry marked: a
// real send is never lost. journal.NewMemory, sqlitejournal and pgjournal
// implement it; with a Journal that does not, a run that ended on a
// signer failure before any byte records its entry as not executed.
type JournalUnsender interface {
	// Unsend records the pending outcome e as Update does (e.State is
	// JournalPending, under the same fence and state rules and errors)
	// and marks the entry never sent: Sent false, Attempts 0. The client
	// calls it only for an entry that was not sent when its run reserved
	// or took it, and under which the run sent nothing.
	Unsend(ctx context.Context, e JournalEntry) error
}

// storePending writes the pending outcome up of a run that ended: as
// never sent (JournalUnsender) when no byte of any attempt ever left
// under an entry the run marked sent, else with Update. done is true
// when the run's answer is already settled: a journal that cannot unsend
// had the entry of a run its signer ended recorded as not executed, and
// refusal carries that.
func (op *operation) storePending(ctx context.Context, up JournalEntry, refusal *APIError) (done bool, err error) {
	jr := op.jr
	if up.State != JournalPending || !jr.marked || jr.inherited || op.attempts > 0 {
		return false, op.c.journal.Update(ctx, up)
	}
	if u, ok := op.c.journal.(JournalUnsender); ok {
		return false, u.Unsend(ctx, up)
	}
	if jr.signFailed && refusal != nil {
		op.recordNotSent(up, refusal)
		return true, nil
	}
	return false, op.c.journal.Update(ctx, up)
}
