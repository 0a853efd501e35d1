package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAPICountsTopLevelAndMethodsOfExportedTypes(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run([]string{"api", "-l", "testdata/pkg"}, &out))
	assert.Equal(t, "testdata/pkg: 5 exported (3 top-level, 2 methods); 4 without methods that only satisfy error, fmt, encoding or slog interfaces\n"+
		"  func New\n  type T\n  var ErrX\n  T.Do\n  T.String\n", out.String())
}

func TestFuncsListsTheLongestFirst(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run([]string{"funcs", "-n", "2", "testdata"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], "T.Do")
	assert.True(t, strings.HasPrefix(strings.TrimSpace(lines[0]), "3 "), lines[0])
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"api"}, {"other", "."}, {"api", "a", "b"}} {
		assert.Error(t, run(args, &strings.Builder{}), "%q", args)
	}
}
