package sqlitejournal

import (
	"errors"
	"fmt"
	"os"

	"github.com/payonce/payonce"
)

// ErrFileChanged: the journal's file was deleted, moved away or replaced
// by another file while the journal was open. Every write is refused
// (wrapped with payonce.ErrJournal, nothing sent): the open handle would
// record into a file no later process finds, and a worker restarted on
// the path would find the entries missing and run them again. Close the
// journal, restore the file (or accept the loss knowingly), and open the
// path again.
var ErrFileChanged = errors.New("sqlitejournal: the journal file was deleted or replaced while open")

// journalFile is the file a Journal opened: its absolute path and what
// the file system said of it then, to tell the same file from another at
// the path (os.SameFile: device and inode).
type journalFile struct {
	path string
	info os.FileInfo
}

// check reports ErrFileChanged unless the file at f's path is still the
// one opened. It costs one stat of the path, made before each write.
func (f *journalFile) check() error {
	if f == nil {
		return nil
	}
	now, err := os.Stat(f.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %w: %s is gone", payonce.ErrJournal, ErrFileChanged, f.path)
	case err != nil:
		return fmt.Errorf("%w: sqlitejournal: stat the journal file: %w", payonce.ErrJournal, err)
	case !os.SameFile(f.info, now):
		return fmt.Errorf("%w: %w: %s is another file now", payonce.ErrJournal, ErrFileChanged, f.path)
	}
	return nil
}
