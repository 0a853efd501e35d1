package pgjournal_test

import (
	"testing"

	"github.com/payonce/payonce/internal/testsupport/pgnotice"
)

// TestMain says, on a run without a database, that the PostgreSQL tests
// were skipped and how to run them.
func TestMain(m *testing.M) { pgnotice.Main(m, "journal/pgjournal") }
