package corekit

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

// Every error kind, here or in the root package, has a stable name, so that a journal can
// store it: a sentinel added later without a name fails here. The journal's
// own errors are not kinds.
func TestEverySentinelHasAKindName(t *testing.T) {
	notKinds := map[string]bool{"ErrJournalNotFound": true, "ErrJournalSettled": true, "ErrJournalRecorded": true, "ErrRedirectRan": true}
	named := map[string]bool{}
	for _, k := range kindNames {
		named[k.kind.Error()] = true
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	root, err := filepath.Glob(filepath.Join("..", "..", "*.go"))
	require.NoError(t, err)
	files = append(files, root...)
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
				return true
			}
			name := vs.Names[0].Name
			call, ok := vs.Values[0].(*ast.CallExpr)
			if !ok || !strings.HasPrefix(name, "Err") || notKinds[name] || len(call.Args) != 1 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "New" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				return true
			}
			msg, _ := strconv.Unquote(lit.Value)
			found++
			assert.True(t, named[msg], "%s (%s) has no KindName", name, f)
			return true
		})
	}
	assert.Greater(t, found, 25)
}
