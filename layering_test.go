package payonce_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An internal package that ships in a merchant's binary (one the public
// packages depend on) is a lower layer: it never imports the root
// package. The verification harness and test support may import anything.
func TestShippedInternalNeverImportsRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/payonce/payonce"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}",
		".", "./a55/...", "./coinepay/...", "./journal/...", "./reconcile/...", "./redact/...", "./otelpayonce/...").Output()
	require.NoError(t, err)
	shipped := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, "|")
		rel, ok := strings.CutPrefix(path, mod+"/")
		if !ok || !strings.HasPrefix(rel, "internal/") {
			continue
		}
		shipped++
		importsRoot := false
		for _, imp := range strings.Fields(imports) {
			importsRoot = importsRoot || imp == mod
		}
		assert.False(t, importsRoot, "%s ships and imports the root package", rel)
	}
	assert.Positive(t, shipped)
}
