package payonce

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every error kind, the core's or a provider's, has a stable name, so that
// a journal can store it: a sentinel added later with errors.New instead
// of a kind fails here, and so does a name used twice. The journal's own
// errors and the redirect marker are not kinds. Sentinels are defined in
// the root and the providers only, never below them.
func TestEverySentinelHasAKindName(t *testing.T) {
	notKinds := map[string]bool{"ErrJournalNotFound": true, "ErrJournalSettled": true}
	var files []string
	for _, dir := range []string{".", "a55", "coinepay", filepath.Join("internal", "corekit")} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		files = append(files, fs...)
	}
	fset := token.NewFileSet()
	names := map[string]string{}
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Err") {
				return true
			}
			name := vs.Names[0].Name
			call, ok := vs.Values[0].(*ast.CallExpr)
			if !ok || len(call.Args) < 1 {
				return true
			}
			var fn string
			switch fun := call.Fun.(type) {
			case *ast.SelectorExpr:
				fn = fun.Sel.Name
			case *ast.Ident:
				fn = fun.Name
			}
			switch fn {
			case "New":
				if strings.HasPrefix(f, "a55") || strings.HasPrefix(f, "coinepay") {
					return true // a provider's errors beyond its kinds (a webhook's signature, a token redirect)
				}
				assert.True(t, notKinds[name], "%s (%s) is a sentinel without a kind name (newKind, NewKind)", name, f)
			case "newKind", "newSubKind", "NewKind":
				assert.NotContains(t, f, "internal", "%s is defined below the root", name)
				lit, ok := call.Args[0].(*ast.BasicLit)
				require.True(t, ok, name)
				kind, _ := strconv.Unquote(lit.Value)
				assert.NotEmpty(t, kind, name)
				assert.Empty(t, names[kind], "%s and %s share the name %q", names[kind], name, kind)
				names[kind] = name
				found++
			}
			return true
		})
	}
	assert.Greater(t, found, 40)
}
