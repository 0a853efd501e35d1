package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The idempotency guide's own examples (guide/: cURL, Python with urllib,
// Node with fetch) run against fakepay: the guide's body, the first
// answer lost, the guide's retry with the same key gets the charge, the
// same key again the same charge, another body 409, one execution in the
// ledger. Each language runs when its tool is installed and skips with
// one line otherwise; .ci/run (and guide/run.sh, against
// `go run ./cmd/fakepay`) fail when one is missing.
func TestGuideScripts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []string
		cmd   []string
	}{
		{"curl", []string{"bash", "curl"}, []string{"bash", "guide/guide.sh"}},
		{"python", []string{"python3"}, []string{"python3", "guide/guide.py"}},
		{"node", []string{"node"}, []string{"node", "guide/guide.mjs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tool := range tc.tools {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("guide script skipped: %s is not installed (.ci/run requires curl, python3 and node)", tool)
				}
			}
			base := start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // bounds a hung script
			defer cancel()
			cmd := exec.CommandContext(ctx, tc.cmd[0], tc.cmd[1:]...)
			cmd.Env = append(os.Environ(), "FAKEPAY_URL="+base)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "ok: "+tc.name+" charge ")
			assert.Contains(t, string(out), "retrying with the same key", "the first answer was lost and retried")
		})
	}
}
