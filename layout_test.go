package payonce

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reader knows from its path whether internal code ships in a merchant's
// binary: the packages directly under internal/ are exactly the internal
// packages the merchant-facing packages link (their tests apart), and
// every other internal package lives in one of four homes that say what it
// is: internal/fake, internal/verify, internal/devtools,
// internal/testsupport.
func TestInternalPathSaysWhetherItShips(t *testing.T) {
	const internal = "github.com/payonce/payonce/internal/"
	var roots, internals, top []string
	for _, p := range goListLines(t, "./...") {
		switch {
		case strings.HasPrefix(p, internal):
			internals = append(internals, p)
			if !strings.Contains(strings.TrimPrefix(p, internal), "/") {
				top = append(top, p)
			}
		case merchantFacing(p):
			roots = append(roots, p)
		}
	}
	require.Contains(t, roots, "github.com/payonce/payonce/a55")
	var shipped []string
	for _, p := range goListLines(t, append([]string{"-deps"}, roots...)...) {
		if strings.HasPrefix(p, internal) {
			shipped = append(shipped, p)
		}
	}
	slices.Sort(shipped)
	slices.Sort(top)
	assert.Equal(t, top, shipped, "the packages directly under internal/ are what merchant binaries link")
	homes := []string{"fake", "verify", "devtools", "testsupport"}
	for _, p := range internals {
		if home, _, nested := strings.Cut(strings.TrimPrefix(p, internal), "/"); nested {
			assert.Contains(t, homes, home, "%s: what does not ship lives in one of internal/'s four homes", p)
		}
	}
}

// merchantFacing tells whether p is a package a merchant's program links:
// not a test kit (a55test, payoncetest...), not A55's sandbox contract
// tests, not the fakes' or the verification's commands.
func merchantFacing(p string) bool {
	const m = "github.com/payonce/payonce"
	return !strings.HasSuffix(p, "test") && p != m+"/a55/a55contract" && p != m+"/cmd/chaos" && p != m+"/cmd/fakepay"
}

// goListLines runs `go list args...` in the module's root and returns the
// words it prints.
func goListLines(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list %s: %s", strings.Join(args, " "), stderr.String())
	return strings.Fields(string(out))
}
