package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// obeyed are the characters a terminal obeys or hides rather than shows:
// none may leave the command raw.
var obeyed = []string{"\x1b", "\x07", "\r", "\x7f", "\u0085", "\u009b", "\u202e", "\u2066", "\u200f", "\u2028", "\ufeff", "\xff"}

func assertEscaped(t *testing.T, out string) {
	t.Helper()
	for _, c := range obeyed {
		assert.NotContains(t, out, c, "%q left raw", c)
	}
}

// What the command writes reaches the terminal with every character it
// would obey or hide escaped (JSON's \u form, so JSON stays JSON), new
// lines, tabs and printable text of any script as they are; a rune cut
// between two writes is written whole.
func TestTerminalWriterEscapes(t *testing.T) {
	var buf bytes.Buffer
	w := newTerminalWriter(&buf)
	in := "ok é 中文 🙂\tcol\nref \x1b[2Jx\x07\rfake \u202etxt.exe \u0085 \x7f \xff end\n"
	_, err := w.Write([]byte(in))
	require.NoError(t, err)
	rune4 := []byte("🙂")
	_, err = w.Write(rune4[:2])
	require.NoError(t, err)
	_, err = w.Write(rune4[2:])
	require.NoError(t, err)
	_, err = w.Write([]byte("\xe2\x80"))
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	out := buf.String()
	assertEscaped(t, out)
	assert.Equal(t, "ok é 中文 🙂\tcol\nref \\u001b[2Jx\\u0007\\u000dfake \\u202etxt.exe \\u0085 \\u007f \\xff end\n🙂\\xe2\\x80", out)

	buf.Reset()
	v := map[string]string{"reference": "o-1\u202e\x1b\u2028🏴\U000e0067"}
	require.NoError(t, writeJSON(newTerminalWriter(&buf), v))
	assertEscaped(t, buf.String())
	var back map[string]string
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back), buf.String())
	assert.Equal(t, v, back, "the escapes are JSON's: the value reads back as stored")
}

// Entries whose names and texts hold terminal controls (written by an
// older client, or straight into the database) are listed and shown
// escaped, as a table and as JSON, and their errors too.
func TestJournalCommandEscapesWhatItPrints(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := sqlitejournal.Open(ctx, path)
	require.NoError(t, err)
	now := time.Now()
	_, _, err = j.Reserve(ctx, payonce.JournalEntry{Scope: "shop", Reference: "o-1", Operation: "charges.create", Method: "POST", Path: "/charge/",
		Key: "key-o-1-000000000001", KeyCreated: now, Fingerprint: "f", CreatedAt: now, UpdatedAt: now, Sent: true})
	require.NoError(t, err)
	const scope, ref = "shop\x1b]0;owned\x07", "o-1\u202etxt.exe\r\x1b[2K"
	_, err = j.DB().ExecContext(ctx, `UPDATE payonce_journal SET scope = ?, reference = ?, last_cause = ?, path = ?`,
		scope, ref, "5xx\n\x1b[31mforged\u2028line", "/charge/\u202e")
	require.NoError(t, err)
	require.NoError(t, j.Close())

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runWith(ctx, args, &out, &errb, func(string) string { return "" }, deps{now: func() time.Time { return now }})
		return code, out.String(), errb.String()
	}
	code, out, stderr := run("journal", "list", "-journal", path)
	require.Equal(t, 0, code, stderr)
	assertEscaped(t, out)
	assert.Contains(t, out, `o-1\u202etxt.exe\r\x1b[2K`)
	assert.Equal(t, 2, strings.Count(out, "\n"), "a header and one row: no forged line")

	code, out, stderr = run("journal", "list", "-json", "-journal", path)
	require.Equal(t, 0, code, stderr)
	assertEscaped(t, out)
	var listed []entryView
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed, 1)
	assert.Equal(t, ref, listed[0].Reference, "JSON reads back the stored name")

	code, out, stderr = run("journal", "show", "-journal", path, scope, ref)
	require.Equal(t, 0, code, stderr)
	assertEscaped(t, out)
	assert.NotContains(t, out, "\n\x1b[31mforged")
	assert.Contains(t, out, `5xx\n\x1b[31mforged\u2028line`)

	code, _, stderr = run("journal", "show", "-journal", path, scope, "no-such\u202e\x1b[2J")
	require.Equal(t, 1, code)
	assertEscaped(t, stderr)
}
