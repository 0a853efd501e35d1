package fakeserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakesRoot is the directory of the fakes within their module: the
// engine and the provider fakes, everything under it.
const fakesRoot = "internal/fake"

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath  string
	Dir         string
	Module      *struct{ Path string }
	GoFiles     []string
	CgoFiles    []string
	Deps        []string // every package it imports, transitively (tests apart)
	TestGoFiles []string // its own tests, compiled into it
	TestImports []string
}

// The fake engine and every provider fake under it import nothing of the
// SDK they check: no package of the module outside internal/fake,
// directly or through another package, in their code or in their own
// (in-package) tests. Tests of package fakeserver_test, which drive the
// fakes through the merchant-facing harnesses, are clients and may.
// Each package is its own subtest, naming the files and the SDK packages
// they import.
func TestFakesImportNothingOfTheSDK(t *testing.T) {
	goTool := goCommand(t)
	pkgs := goList(t, goTool, "-json", "../...")
	require.NotEmpty(t, pkgs)
	var names []string
	for _, p := range pkgs {
		names = append(names, p.ImportPath)
	}
	module := pkgs[0].Module.Path
	for _, want := range []string{"/fakeserver", "/a55fake", "/coinepayfake"} {
		require.Contains(t, names, module+"/"+fakesRoot+want, "every fake is checked")
	}
	for _, p := range pkgs {
		t.Run(strings.TrimPrefix(p.ImportPath, module+"/"), func(t *testing.T) {
			if bad := sdkPackages(module, p.Deps); len(bad) > 0 {
				t.Errorf("%s imports the SDK it checks: %s\n%s", p.ImportPath, strings.Join(bad, ", "),
					importedBy(t, module, p.Dir, append(slices.Clone(p.GoFiles), p.CgoFiles...)))
			}
			testDeps := p.TestImports
			if len(testDeps) > 0 {
				for _, d := range goList(t, goTool, append([]string{"-deps", "-json=ImportPath"}, p.TestImports...)...) {
					testDeps = append(testDeps, d.ImportPath)
				}
			}
			if bad := sdkPackages(module, testDeps); len(bad) > 0 {
				t.Errorf("%s's own tests import the SDK it checks: %s\n%s", p.ImportPath, strings.Join(bad, ", "),
					importedBy(t, module, p.Dir, p.TestGoFiles))
			}
		})
	}
}

// sdkPackages returns the import paths of paths that are in module and
// outside the fakes, sorted, each once.
func sdkPackages(module string, paths []string) []string {
	var bad []string
	for _, p := range paths {
		if p != module && !strings.HasPrefix(p, module+"/") {
			continue
		}
		if rest := strings.TrimPrefix(p, module+"/"); rest == fakesRoot || strings.HasPrefix(rest, fakesRoot+"/") {
			continue
		}
		if !slices.Contains(bad, p) {
			bad = append(bad, p)
		}
	}
	sort.Strings(bad)
	return bad
}

func TestSDKPackagesAreTheModuleOutsideTheFakes(t *testing.T) {
	const m = "github.com/payonce/payonce"
	got := sdkPackages(m, []string{
		"fmt", m, m + "/redact", m + "/internal/loopback", m + "/internal/fake/fakeserver", m + "/internal/fake/a55fake",
		m + "/internal/fakex", "github.com/payonce/payoncex", "github.com/stretchr/testify/assert", m + "/redact",
		m + "/coinepay/coinepaytest",
	})
	assert.Equal(t, []string{m, m + "/coinepay/coinepaytest", m + "/internal/fakex", m + "/internal/loopback", m + "/redact"}, got)
}

// importedBy names, for a failure message, the files among files (in
// dir) that import a package of the SDK, and what each imports.
func importedBy(t *testing.T, module, dir string, files []string) string {
	t.Helper()
	var lines []string
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, f), nil, parser.ImportsOnly)
		if err != nil {
			lines = append(lines, "  "+f+": "+err.Error())
			continue
		}
		var paths []string
		for _, imp := range ast.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil {
				paths = append(paths, p)
			}
		}
		if bad := sdkPackages(module, paths); len(bad) > 0 {
			lines = append(lines, "  "+f+" imports "+strings.Join(bad, ", "))
		}
	}
	if len(lines) == 0 {
		return "  (through a package of the fakes that does)"
	}
	return strings.Join(lines, "\n")
}

// goCommand returns the go command that runs this test.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(build.Default.GOROOT, "bin", "go")
	_, err := exec.LookPath(p)
	require.NoError(t, err, "the import check needs the go command")
	return p
}

// goList runs `go list args...` in this package's directory and decodes
// the packages it prints (args hold -json).
func goList(t *testing.T, goTool string, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list %s: %s", strings.Join(args, " "), stderr.String())
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
