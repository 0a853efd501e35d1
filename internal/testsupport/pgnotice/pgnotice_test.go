package pgnotice

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAnnounceNamesWhatWasSkippedAndHowToRunIt(t *testing.T) {
	var a, b bytes.Buffer
	announce("journal/pgjournal", "", &a, &b)
	for _, s := range []string{a.String(), b.String()} {
		assert.Contains(t, s, "journal/pgjournal")
		assert.Contains(t, s, "PostgreSQL tests skipped")
		assert.Contains(t, s, EnvURL+"="+ExampleURL)
		assert.Equal(t, 1, bytes.Count([]byte(s), []byte("\n")), "one line")
	}
}

func TestAnnounceSaysNothingWhenTheURLIsSet(t *testing.T) {
	var a bytes.Buffer
	announce("journal/pgjournal", ExampleURL, &a)
	assert.Empty(t, a.String())
}
