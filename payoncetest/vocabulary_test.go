package payoncetest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shared are the types every fake uses from this package.
var shared = []string{"Rule", "FaultKind", "Ledger", "Operation", "Attempt", "Stats", "Clock", "Option", "Fake"}

// The shared types are declared here, as types of their own (go doc shows
// them), and nowhere else: no provider test package copies or aliases one.
func TestSharedTypesAreDeclaredOnce(t *testing.T) {
	here := typeSpecs(t, ".")
	for _, n := range shared {
		ts, ok := here[n]
		require.True(t, ok, "type %s is not declared in payoncetest", n)
		assert.False(t, ts.Assign.IsValid(), "type %s is an alias", n)
	}
	for _, dir := range []string{"../a55/a55test", "../coinepay/coinepaytest"} {
		there := typeSpecs(t, dir)
		for _, n := range append(shared, "SharedClock") {
			assert.NotContains(t, there, n, "%s declares %s again", dir, n)
		}
	}
}

// typeSpecs returns the types declared in the non-test files of dir.
func typeSpecs(t *testing.T, dir string) map[string]*ast.TypeSpec {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	specs := map[string]*ast.TypeSpec{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					specs[ts.Name.Name] = ts
				}
			}
		}
	}
	return specs
}
