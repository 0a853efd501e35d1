package sqlitejournal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cost of the file check each write transaction makes: one stat.
func BenchmarkFileCheck(b *testing.B) {
	path := filepath.Join(b.TempDir(), "journal.db")
	require.NoError(b, os.WriteFile(path, nil, 0o600))
	info, err := os.Stat(path)
	require.NoError(b, err)
	f := &journalFile{path: path, info: info}
	b.ReportAllocs()
	for b.Loop() {
		if err := f.check(); err != nil {
			b.Fatal(err)
		}
	}
}
