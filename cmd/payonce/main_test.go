package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// program is the command run as a program with args: this test binary
// again, whose TestMain runs main when runMainEnv is set.
func program(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

// The program lists an empty journal as JSON and exits 2 on a bad
// flag.
func TestBinary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, j.Close())

	out, err := program(t, "journal", "list", "-json", "-journal", path).Output()
	require.NoError(t, err)
	assert.JSONEq(t, "[]", string(out))
	err = program(t, "journal", "list", "-bogus", "-journal", path).Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())
}
