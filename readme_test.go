package payonce

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README quotes code and figures that live elsewhere; these tests keep
// the quotes true.

// funcSource returns the Go function named name from src, up to its closing
// brace at the start of a line.
func funcSource(t *testing.T, src, name string) string {
	t.Helper()
	i := strings.Index(src, "func "+name+"(")
	require.GreaterOrEqual(t, i, 0, "func %s not found", name)
	j := strings.Index(src[i:], "\n}\n")
	require.Greater(t, j, 0)
	return src[i : i+j+2]
}

func TestReadmeMerchantTestIsTheRealOne(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("a55/a55test/merchant_test.go")
	require.NoError(t, err)
	for _, name := range []string{"checkout", "TestCheckoutChargesOnceWhenTheAnswerIsLost"} {
		assert.Equal(t, funcSource(t, string(src), name), funcSource(t, string(readme), name), name)
	}
}

func TestReadmeSigningVectorIsTheRealOne(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	v := loadVectors(t)[0]
	assert.Contains(t, string(readme), "signature "+v.Signature)
	assert.Contains(t, string(readme), strings.ReplaceAll(v.Canonical, "\n", `\n`))
}

func TestReadmeHasTheTwoSetUpCommands(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)## Set-up: the two commands\n\n```sh\n(.*?)```").FindStringSubmatch(string(readme))
	require.Len(t, block, 2)
	lines := strings.Split(strings.TrimSpace(block[1]), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "go run ./cmd/chaos "))
	assert.True(t, strings.HasPrefix(lines[1], "go test -race ./... "))
}
