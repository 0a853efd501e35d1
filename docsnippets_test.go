package payonce

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
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

// Every ```go block of README.md and docs/*.md is type-checked against the
// module, so that a renamed or removed API cannot live on in the docs.
//
// A block that starts with a package clause is a whole file. Any other block
// is a fragment: the declarations of a file (functions, types) when it parses
// as one, else the statements of a function returning error. A fragment may
// start with import declarations; the packages it names without importing
// them are imported from snippetPackages. The merchant's own values a
// fragment uses without declaring them (ctx, order, job, req…) come from
// snippetPrelude. A fragment may leave a variable unused: it shows a step,
// not a program. A block that cannot compile (a sketch) says so in its first
// line, "// not compiled: <why>"; the test counts such blocks and logs them.
//
// The blocks are checked with go/types against the export data one
// `go list -export` run builds, so the whole check is one go command.

// snippetOptOut starts the first line of a block that is not compiled.
const snippetOptOut = "// not compiled:"

// snippetPackages returns the packages a fragment may use without importing
// them, by the name it calls them.
func snippetPackages() map[string]string {
	const mod = "github.com/payonce/payonce"
	return map[string]string{
		"payonce":       mod,
		"a55":           mod + "/a55",
		"a55test":       mod + "/a55/a55test",
		"coinepay":      mod + "/coinepay",
		"coinepaytest":  mod + "/coinepay/coinepaytest",
		"payoncetest":   mod + "/payoncetest",
		"journal":       mod + "/journal",
		"sqlitejournal": mod + "/journal/sqlitejournal",
		"pgjournal":     mod + "/journal/pgjournal",
		"otelpayonce":   mod + "/otelpayonce",
		"redact":        mod + "/redact",
		"require":       "github.com/stretchr/testify/require",
		"assert":        "github.com/stretchr/testify/assert",
		"otel":          "go.opentelemetry.io/otel",
		"trace":         "go.opentelemetry.io/otel/trace",
		"metric":        "go.opentelemetry.io/otel/metric",
		"bytes":         "bytes",
		"context":       "context",
		"errors":        "errors",
		"fmt":           "fmt",
		"io":            "io",
		"json":          "encoding/json",
		"log":           "log",
		"slog":          "log/slog",
		"http":          "net/http",
		"httptest":      "net/http/httptest",
		"os":            "os",
		"strings":       "strings",
		"sync":          "sync",
		"testing":       "testing",
		"time":          "time",
	}
}

// snippetPrelude declares what the merchant's code around a fragment holds,
// minus what the fragment declares itself. Its client is a Coinepay client
// for a fragment that names coinepay and not a55, an A55 one for any other
// (%[1]s, %[2]s: the import it needs and its package).
const snippetPrelude = `package snippet

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/journal/pgjournal"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	%[1]s
)

var (
	client *%[2]s.Client

	ctx, jobCtx context.Context
	t           *testing.T
	err         error

	auth                                 a55.Auth
	apiKey, apiSecret, baseURL, secret   string
	hostname, orderID, requestID, pgURL  string
	w                                    string // a wallet's UUID
	start                                time.Time
	chargeJSON                           []byte
	req                                  *a55.ChargeCreateRequest
	ch                                   *a55.Charge
	charge                               a55.Charge
	core                                 *payonce.Client
	key, orderKey                        payonce.Key
	j                                    *pgjournal.Journal
	obs                                  payonce.Observer
	tp                                   trace.TracerProvider
	mp                                   metric.MeterProvider
	receiver                             *httptest.Server

	order struct {
		ID             int
		PaymentAttempt int
		CreatedAt      time.Time
	}
	job struct {
		ID, CardID string
		CreatedAt  time.Time
		Amount     payonce.Amount
		Key        []byte
	}
	recharge struct {
		ID        string
		CreatedAt time.Time
	}
)

type merchantOrder struct{}

func (merchantOrder) ChargeRequest() *a55.ChargeCreateRequest { return nil }

func loadOrder(reference string) merchantOrder { return merchantOrder{} }
`

// docSnippet is one ```go block of a page.
type docSnippet struct {
	page   string
	line   int    // the line of the page the code starts on
	src    string // the code, its fence's indentation removed
	optOut string // why it is not compiled, or ""
}

// goSnippets returns the ```go blocks of the Markdown page md.
func goSnippets(page, md string) []docSnippet {
	var out []docSnippet
	sc := bufio.NewScanner(strings.NewReader(md))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(line) - len(trimmed)
		lang, _, _ := strings.Cut(strings.TrimSpace(trimmed[3:]), " ")
		s := docSnippet{page: page, line: n + 1}
		var b strings.Builder
		for sc.Scan() {
			n++
			code := sc.Text()
			if strings.HasPrefix(strings.TrimLeft(code, " "), "```") {
				break
			}
			trim := min(indent, len(code)-len(strings.TrimLeft(code, " ")))
			b.WriteString(code[trim:])
			b.WriteByte('\n')
		}
		if lang != "go" {
			continue
		}
		s.src = b.String()
		first, _, _ := strings.Cut(s.src, "\n")
		if reason, ok := cutFold(strings.TrimSpace(first), snippetOptOut); ok {
			s.optOut = strings.TrimSpace(reason)
			if s.optOut == "" {
				s.optOut = "(no reason given)"
			}
		}
		out = append(out, s)
	}
	return out
}

// cutFold is strings.CutPrefix, ignoring case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// preparedSnippet is a block made into the files of a package.
type preparedSnippet struct {
	docSnippet
	pkg     string // the package path it is checked as
	files   []*ast.File
	imports []string
}

// isWholeFile reports whether src starts, after comments, with a package
// clause.
func isWholeFile(src string) bool {
	for line := range strings.Lines(src) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		return strings.HasPrefix(line, "package ")
	}
	return false
}

// prepareSnippet parses s into the files of one package: the block as it
// is, or a fragment with its imports and the prelude.
func prepareSnippet(fset *token.FileSet, s docSnippet, pkg string) (preparedSnippet, error) {
	p := preparedSnippet{docSnippet: s, pkg: pkg}
	where := fmt.Sprintf("//line %s:%d\n", s.page, s.line)
	if isWholeFile(s.src) {
		f, err := parser.ParseFile(fset, "snippet.go", where+s.src, parser.SkipObjectResolution)
		if err != nil {
			return p, err
		}
		if err := importsInternal(fset, f); err != nil {
			return p, err
		}
		p.files = []*ast.File{f}
		p.imports = importPaths(f)
		return p, nil
	}

	// The fragment's own imports, then its body.
	const header = "package snippet\n"
	head, err := parser.ParseFile(fset, "snippet.go", header+where+s.src, parser.ImportsOnly)
	if err != nil {
		return p, err
	}
	if err := importsInternal(fset, head); err != nil {
		return p, err
	}
	imports := map[string]string{} // name: path
	body, bodyLine := s.src, s.line
	for _, spec := range head.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			return p, err
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = path
	}
	if n := len(head.Decls); n > 0 {
		end := fset.File(head.Pos()).Offset(head.Decls[n-1].End()) - len(header) - len(where)
		bodyLine += strings.Count(s.src[:end], "\n")
		body = s.src[end:]
	}
	where = fmt.Sprintf("//line %s:%d\n", s.page, bodyLine)

	// A file's declarations, or a function's statements.
	asFile := header + where + body
	asFunc := header + "func _() error {\n" + where + body + "\nreturn nil\n}\n"
	src := asFile
	f, err := parser.ParseFile(fset, "snippet.go", asFile, 0)
	if err != nil {
		src = asFunc
		if f, err = parser.ParseFile(fset, "snippet.go", asFunc, 0); err != nil {
			return p, err
		}
	}
	used := usedPackages(f)
	table := snippetPackages()
	for _, name := range used {
		if path, ok := table[name]; ok && imports[name] == "" {
			imports[name] = path
		}
	}
	var decl strings.Builder
	decl.WriteString("package snippet\n\nimport (\n")
	for _, name := range slices.Sorted(maps.Keys(imports)) {
		fmt.Fprintf(&decl, "\t%s %q\n", name, imports[name])
	}
	decl.WriteString(")\n")
	if f, err = parser.ParseFile(fset, "snippet.go", decl.String()+strings.TrimPrefix(src, header), 0); err != nil {
		return p, err
	}

	provider, providerImport := "a55", ""
	if slices.Contains(used, "coinepay") && !slices.Contains(used, "a55") {
		provider, providerImport = "coinepay", `"github.com/payonce/payonce/coinepay"`
	}
	prelude, err := parser.ParseFile(fset, "prelude.go", fmt.Sprintf(snippetPrelude, providerImport, provider), 0)
	if err != nil {
		return p, err
	}
	dropDeclared(prelude, topLevelNames(f))
	p.files = []*ast.File{f, prelude}
	p.imports = append(importPaths(f), importPaths(prelude)...)
	return p, nil
}

// importsInternal refuses a block that imports an internal package: the
// docs show what a merchant's module can write, and the go command keeps
// internal packages to this module.
func importsInternal(fset *token.FileSet, f *ast.File) error {
	for _, spec := range f.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		if strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/") {
			return fmt.Errorf("%s: imports %s, which only this module may import", fset.Position(spec.Pos()), path)
		}
	}
	return nil
}

// importPaths returns the paths f imports.
func importPaths(f *ast.File) []string {
	var paths []string
	for _, spec := range f.Imports {
		paths = append(paths, strings.Trim(spec.Path.Value, `"`))
	}
	return paths
}

// usedPackages returns the names f selects from (x in x.Y) and does not
// declare itself, sorted.
func usedPackages(f *ast.File) []string {
	seen := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
				seen[id.Name] = true
			}
		}
		return true
	})
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// topLevelNames returns the names f declares at package level.
func topLevelNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					for _, id := range spec.Names {
						names[id.Name] = true
					}
				case *ast.TypeSpec:
					names[spec.Name.Name] = true
				}
			}
		}
	}
	return names
}

// dropDeclared removes from the prelude what the fragment declares itself.
func dropDeclared(prelude *ast.File, names map[string]bool) {
	decls := prelude.Decls[:0]
	for _, d := range prelude.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && names[d.Name.Name] {
				continue
			}
		case *ast.GenDecl:
			specs := d.Specs[:0]
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					var kept []*ast.Ident
					for _, id := range spec.Names {
						if !names[id.Name] {
							kept = append(kept, id)
						}
					}
					if len(kept) == 0 {
						continue
					}
					spec.Names = kept
				case *ast.TypeSpec:
					if names[spec.Name.Name] {
						continue
					}
				}
				specs = append(specs, spec)
			}
			if len(specs) == 0 {
				continue
			}
			d.Specs = specs
		}
		decls = append(decls, d)
	}
	prelude.Decls = decls
}

// exportData runs `go list -export` once for paths and their dependencies
// and returns an importer reading what it built.
func exportData(t *testing.T, fset *token.FileSet, paths []string) types.Importer {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, paths...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -export: %s", stderr.String())
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, file, _ := strings.Cut(strings.TrimSpace(line), "\t")
		exports[path] = file
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
}

// snippetCheck is the outcome of checking the blocks of some pages.
type snippetCheck struct {
	found, compiled, optedOut map[string]int // by page
	optOuts                   []string       // page:line: why
	errs                      []error        // page:line:col: message
}

// checkSnippets parses and type-checks the blocks of pages (name: text).
func checkSnippets(t *testing.T, pages map[string]string) snippetCheck {
	t.Helper()
	res := snippetCheck{found: map[string]int{}, compiled: map[string]int{}, optedOut: map[string]int{}}
	fset := token.NewFileSet()
	var prepared []preparedSnippet
	paths := map[string]bool{}
	for _, page := range slices.Sorted(maps.Keys(pages)) {
		for i, s := range goSnippets(page, pages[page]) {
			res.found[page]++
			if s.optOut != "" {
				res.optedOut[page]++
				res.optOuts = append(res.optOuts, fmt.Sprintf("%s:%d: %s", page, s.line, s.optOut))
				continue
			}
			p, err := prepareSnippet(fset, s, fmt.Sprintf("snippet/%s/%d", page, i+1))
			if err != nil {
				res.errs = append(res.errs, err)
				continue
			}
			for _, path := range p.imports {
				paths[path] = true
			}
			prepared = append(prepared, p)
		}
	}
	if len(prepared) == 0 {
		return res
	}
	imp := exportData(t, fset, slices.Sorted(maps.Keys(paths)))
	for _, p := range prepared {
		var errs []error
		conf := types.Config{Importer: imp, Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) && te.Soft && strings.Contains(te.Msg, "declared and not used") {
				return // a fragment shows a step, not a whole program
			}
			errs = append(errs, err)
		}}
		_, _ = conf.Check(p.pkg, fset, p.files, nil)
		if len(errs) == 0 {
			res.compiled[p.page]++
		}
		res.errs = append(res.errs, errs...)
	}
	return res
}

func TestDocSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: type-checking the docs' Go blocks runs go list -export on the module")
	}
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	pages = append([]string{"README.md"}, pages...)
	texts := map[string]string{}
	for _, page := range pages {
		texts[filepath.ToSlash(page)] = readDoc(t, page)
	}
	res := checkSnippets(t, texts)
	total := 0
	for _, page := range slices.Sorted(maps.Keys(texts)) {
		total += res.found[page]
		if res.found[page] > 0 {
			t.Logf("%s: %d Go blocks, %d compiled, %d opted out", page, res.found[page], res.compiled[page], res.optedOut[page])
		}
	}
	for _, o := range res.optOuts {
		t.Logf("not compiled: %s", o)
	}
	for _, err := range res.errs {
		t.Error(err)
	}
	assert.Greater(t, total, 10, "the fence pattern found almost no Go blocks")
}

// The checker finds the blocks however they are fenced, compiles whole
// files, declarations and statements, and rejects a block that does not
// compile, at its line of the page.
func TestDocSnippetCheckerRejectsBrokenBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: type-checking runs go list -export on the module")
	}
	// ''' stands for a fence, which a raw string cannot hold.
	page := strings.ReplaceAll(`# Page
'''sh
go test ./...
'''
'''go
package main

import "fmt"

func main() { fmt.Println(1) }
'''
'''go
import "github.com/payonce/payonce/otelpayonce"

obs, err := otelpayonce.New()
client, err := a55.NewClient(auth, payonce.WithObserver(obs.Hooks()))
'''
1. A step:
   '''go
   func charge(ctx context.Context) (*a55.Charge, error) {
   	return client.Charges.Create(ctx, req, payonce.WithKey(key))
   }
   '''
'''go
key, err := payonce.NewKey(order.CreatedAt, "order")
ch, err := client.Charges.Create(ctx, req, payonce.WithIdempotencyKey(key))
'''
'''go
// Not compiled: a sketch of the shape
ch, err := client.Charges.Create(ctx, ...)
'''
'''go
for c, err := range client.Cards.All(ctx, nil) { ... }
'''
'''go
package main

func main() { payonce.Do() }
'''
'''go
import "github.com/payonce/payonce/internal/luhn"

luhn.Valid("4111111111111111")
'''
`, "'''", "```")
	res := checkSnippets(t, map[string]string{"page.md": page})
	assert.Equal(t, 8, res.found["page.md"])
	assert.Equal(t, 3, res.compiled["page.md"], "the whole file, the fragment with an import and the indented declaration")
	assert.Equal(t, 1, res.optedOut["page.md"])
	assert.Equal(t, []string{"page.md:29: a sketch of the shape"}, res.optOuts)
	var msgs []string
	for _, err := range res.errs {
		msgs = append(msgs, err.Error())
	}
	require.Len(t, msgs, 4, "%q", msgs)
	assert.Contains(t, msgs[0], "page.md:33:", "a block that is neither declarations nor statements")
	assert.Contains(t, msgs[1], "page.md:41:", "an internal package")
	assert.Contains(t, msgs[2], "page.md:26:", "an option the API does not have")
	assert.Contains(t, msgs[2], "WithIdempotencyKey")
	assert.Contains(t, msgs[3], "page.md:38:", "a whole file is not given the fragments' imports")
	assert.Contains(t, msgs[3], "undefined: payonce")
}
