package main

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// An error of the library is printed with one "payonce: ", however many
// errors it wraps, and with the command's flags where it names a
// program's Go options.
func TestErrorTextNamesTheCommandsFlags(t *testing.T) {
	ae := &payonce.APIError{Provider: "a55", Operation: "charges.settle", Kind: payonce.ErrInvalidRequest,
		Err: errors.New(`reference "r" holds no request summary to match by: give SettleOptions.Request, the request it was recorded with`)}
	for name, tc := range map[string]struct {
		err        error
		want, gone []string
	}{
		"summary": {err: ae, want: []string{"a55 charges.settle: invalid request", "give -request charge.json, the request"},
			gone: []string{"SettleOptions", "payonce: "}},
		"wrapped": {err: errorsJoin("a55 client: ", &payonce.APIError{Kind: payonce.ErrInvalidConfig, Err: &payonce.LegacyScopeError{Scope: "a55:c", Own: "a55:c@https://x"}}),
			want: []string{"a55 client: invalid configuration", "payonce journal scopes -journal <journal>"},
			gone: []string{"WithLegacyScopes", "payonce: "}},
		"settle by hand": {err: errors.New(`reference "r" records "charges.refund", not charges.create: settle it with payonce.Client.Settle`),
			want: []string{"settle it by hand (-outcome, -reason)"}, gone: []string{"payonce.Client"}},
		"scope": {err: errors.New("scope is too long: pass payonce.WithScope"), want: []string{"set " + EnvScope}, gone: []string{"WithScope"}},
	} {
		got := errorText(tc.err)
		for _, w := range tc.want {
			assert.Contains(t, got, w, name)
		}
		for _, g := range tc.gone {
			assert.NotContains(t, got, g, name)
		}
	}
}

// errorsJoin wraps err after prefix, as the command's own errors do.
func errorsJoin(prefix string, err error) error { return &prefixed{prefix, err} }

type prefixed struct {
	p   string
	err error
}

func (e *prefixed) Error() string { return e.p + e.err.Error() }
func (e *prefixed) Unwrap() error { return e.err }

// goName is a Go name a library error may tell a program to use.
var goName = regexp.MustCompile(`\b(?:payonce\.[A-Z]\w*(?:\.[A-Z]\w*)?|[A-Z]\w*Options\.[A-Z]\w*|With[A-Z]\w*)`)

// Every Go name a string of the command's packages (the module's packages
// it imports, at any depth) holds is either said in the command's terms
// (operatorTerms) or cannot reach its operator (notOperatorFacing): a new
// message naming a Go option fails here until the command says it its
// own way.
func TestEveryGoNameInAnErrorHasAnOperatorTerm(t *testing.T) {
	const module = "github.com/payonce/payonce"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	seen := map[string]bool{}
	var dirs []string
	var visit func(dir string)
	visit = func(dir string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		dirs = append(dirs, dir)
		for _, f := range sourceFiles(t, dir) {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range file.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == module || strings.HasPrefix(p, module+"/") {
					visit(filepath.Join(root, strings.TrimPrefix(p, module)))
				}
			}
		}
	}
	visit(filepath.Join(root, "cmd", "payonce"))
	require.Contains(t, dirs, filepath.Join(root, "a55"))
	found, exempt := 0, map[string]bool{}
	for _, dir := range dirs[1:] { // the command's own messages are its own
		for _, f := range sourceFiles(t, dir) {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			require.NoError(t, err)
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				said := inOperatorTerms(s)
				for _, name := range goName.FindAllString(s, -1) {
					found++
					if _, ok := notOperatorFacing[name]; ok {
						exempt[name] = true
						continue
					}
					assert.NotContains(t, said, name, "%s: %q names %s: add an operatorTerm saying it in the command's flags, or a notOperatorFacing reason",
						f, s, name)
				}
				return true
			})
		}
	}
	assert.NotZero(t, found, "the scan found the library's Go names")
	for name := range notOperatorFacing {
		assert.True(t, exempt[name], "notOperatorFacing names %s, which no error of the command's packages holds any more", name)
	}
}

// sourceFiles are dir's Go files but its tests.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}
