package settlelookup_test

import (
	"errors"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/settlelookup"
	"github.com/stretchr/testify/assert"
)

func TestNamedListsTheFirstFew(t *testing.T) {
	id := func(s string) string { return "id-" + s }
	assert.Equal(t, "", settlelookup.Named([]string{}, id))
	assert.Equal(t, "id-a, id-b", settlelookup.Named([]string{"a", "b"}, id))
	assert.Equal(t, "id-1, id-2, id-3, id-4, id-5", settlelookup.Named([]string{"1", "2", "3", "4", "5", "6", "7"}, id))
}

func TestWindowIsUTC(t *testing.T) {
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	assert.Equal(t, "created 2026-01-02T02:04:05Z to 2026-01-02T02:04:05Z", settlelookup.Window(from, from))
}

func TestOutcomeOf(t *testing.T) {
	assert.Equal(t, "succeeded", settlelookup.OutcomeOf(payonce.JournalEntry{State: payonce.JournalSucceeded}))
	assert.Equal(t, "failed", settlelookup.OutcomeOf(payonce.JournalEntry{State: payonce.JournalFailed}))
}

func TestErrKindOf(t *testing.T) {
	assert.ErrorIs(t, settlelookup.ErrKindOf(errors.New("reset")), payonce.ErrTransport)
	assert.ErrorIs(t, settlelookup.ErrKindOf(&payonce.APIError{Kind: payonce.ErrRateLimited}), payonce.ErrRateLimited)
}
