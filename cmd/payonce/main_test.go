package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The built binary lists an empty journal as JSON and exits 2 on a bad
// flag.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "payonce")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	outb, err := build.CombinedOutput()
	require.NoError(t, err, string(outb))
	path := filepath.Join(dir, "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, j.Close())

	out, err := exec.CommandContext(t.Context(), bin, "journal", "list", "-json", "-journal", path).Output()
	require.NoError(t, err)
	assert.JSONEq(t, "[]", string(out))
	err = exec.CommandContext(t.Context(), bin, "journal", "list", "-bogus", "-journal", path).Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())
}
