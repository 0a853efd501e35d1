package pgjournal_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal/journaltest"
)

// A receiver's HandlerTx holds the event's row until its transaction
// ends (its mark comes first). The provider delivers the event again,
// twice, to the same process, while the handler runs (A55 redelivers a
// webhook answered slowly): each redelivery's RecordEvent waits for that
// row lock inside a group-commit batch, and with both lanes waiting,
// every journal write of the process waits too: a payment's reservation
// cannot be made until the webhook handler ends (at worst 30 s, the
// batch's bound, then it fails). The journal's writes must go on while
// the inbox waits on a held event.
func TestPaymentsGoOnWhileAHandlerHoldsAnEvent(t *testing.T) {
	j := open(t)
	ctx := t.Context()
	release, inHandler := make(chan struct{}), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	ev := payonce.InboxEvent{Scope: "a55:shop", EventID: "charge/1/refunded/1", Body: []byte(`{}`)}
	held := make(chan error, 1)
	go func() {
		_, err := payonce.HandleOnce(ctx, j, ev, j.HandlerTx(func(context.Context, pgx.Tx, payonce.InboxEvent) error {
			close(inHandler)
			<-release
			return nil
		}))
		held <- err
	}()
	<-inHandler

	waiters := func() (n int) {
		require.NoError(t, j.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`, j.Schema()).Scan(&n))
		return n
	}
	again := make(chan error, 2)
	redeliver := func() {
		go func() {
			_, err := payonce.HandleOnce(ctx, j, ev, payonce.EventHandler(func(context.Context, payonce.InboxEvent) error { return nil }))
			again <- err
		}()
	}
	// One redelivery after the other, each waiting in the database (or
	// answered) before the next.
	returned := 0
	for want := 1; want <= 2; want++ {
		redeliver()
		for waiters() < want-returned {
			select {
			case <-again:
				returned++
			default:
			}
		}
	}

	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, _, err := j.Reserve(rctx, journaltest.Entry("a55:shop", "order-1/attempt-1"))
	require.NoError(t, err, "a payment's reservation waits for no webhook handler")
	close(release)
	require.NoError(t, <-held)
}
