package journal_test

import (
	"testing"

	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
)

func TestMemoryConformance(t *testing.T) {
	journaltest.Run(t, func(t *testing.T) journal.Store { return journal.NewMemory() })
}

func TestMemoryFingerprintBinding(t *testing.T) {
	m := journal.NewMemory()
	journaltest.FingerprintBinding(t, m, m.ReserveTx)
}

func TestMemoryManyAttempts(t *testing.T) {
	journaltest.ManyAttempts(t, journal.NewMemory())
}
