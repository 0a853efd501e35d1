package a55contract_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/a55.md holds one table of A55's reference, name by name: every
// endpoint, field, status, code and webhook field of
// testdata/a55/reference.json → the client's Go names → what the fake
// does → the tests that hold it → the page. This test keeps the table
// true: every documented name has exactly one row and every row names
// only documented names, every Go name of the client column exists in
// package a55 (or payonce, so qualified), every test exists, every row
// gives the page of each name it holds, and each endpoint's row gives
// its path and a contract test that runs against the sandbox too.

// tableHeader is the table's header row.
const tableHeader = "| reference | client | fake | test | page |"

// docRow is one row of the table.
type docRow struct {
	line                            int
	names, client, fake, test, page string
}

// docTable reads the table from docs/a55.md: there must be one.
func docTable(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile("../../docs/a55.md")
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	var rows []docRow
	found := 0
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != tableHeader {
			continue
		}
		found++
		for j := i + 2; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			cells := strings.Split(strings.Trim(strings.TrimSpace(lines[j]), "|"), "|")
			require.Len(t, cells, 5, "docs/a55.md:%d: a row has five cells (no | inside one)", j+1)
			rows = append(rows, docRow{line: j + 1, names: cells[0], client: cells[1], fake: cells[2], test: cells[3], page: cells[4]})
		}
	}
	require.Equal(t, 1, found, "docs/a55.md holds the table once, under %q", tableHeader)
	return rows
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// spans are the code spans of a cell.
func spans(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// expand writes out the first {a,b} group of a name, recursively:
// create_charge.{wallet_uuid,merchant_id} is two names.
func expand(name string) []string {
	open := strings.IndexByte(name, '{')
	if open < 0 {
		return []string{name}
	}
	end := strings.IndexByte(name[open:], '}')
	if end < 0 {
		return []string{name}
	}
	var out []string
	for _, alt := range strings.Split(name[open+1:open+end], ",") {
		out = append(out, expand(name[:open]+strings.TrimSpace(alt)+name[open+end+1:])...)
	}
	return out
}

// referenceNames are reference.json's names, as the table writes them,
// with the page of each (a field's own, else its parent's, else its
// endpoint's):
//
//	create_charge                       an endpoint
//	create_charge.payer_address.street  a member of its request body
//	refund_charge/charge_uuid           a parameter of its path
//	list_charges?filter                 a parameter of its query
//	create_charge:pix_payload.qr_code   a member of its answer
//	guide_form.card.number              the idempotency guide's body
//	status:issued, code:TIMEOUT, return_code:05
//	webhook.charge_uuid, header:X-Webhook-Signature
func referenceNames(r *ref) map[string]string {
	out := map[string]string{}
	var add func(prefix string, fs []refField, page string)
	add = func(prefix string, fs []refField, page string) {
		for _, f := range fs {
			p := page
			if f.Page != "" {
				p = f.Page
			}
			out[prefix+f.Name] = p
			add(prefix+f.Name+".", f.Fields, p)
		}
	}
	for _, e := range r.Endpoints {
		out[e.Name] = e.Page
		add(e.Name+".", e.Request, e.Page)
		for _, p := range e.PathParams {
			out[e.Name+"/"+p] = e.Page
		}
		for _, q := range e.Query {
			out[e.Name+"?"+q.Name] = e.Page
			if q.Page != "" {
				out[e.Name+"?"+q.Name] = q.Page
			}
		}
		add(e.Name+":", e.Response, e.Page)
	}
	add("guide_form.", r.GuideForm.Request, r.GuideForm.Page)
	for _, s := range r.Statuses {
		out["status:"+s.Name] = s.Page
	}
	for _, c := range r.Codes {
		out["code:"+c.Code] = c.Page
	}
	for _, v := range r.ReturnCodes.ByLastDigit {
		if v != "random" {
			out["return_code:"+v] = r.ReturnCodes.Page
		}
	}
	add("webhook.", r.Webhook.Fields, r.Webhook.Page)
	for _, h := range r.Webhook.Headers {
		out["header:"+h] = r.Webhook.Page
	}
	return out
}

var pageURL = regexp.MustCompile(`https://docs\.a55\.tech/[^\s)>\]]+`)

// The table holds every documented name once, with Go names, tests and
// pages that exist.
func TestDocTableCoversTheReference(t *testing.T) {
	r := loadRef(t)
	documented := referenceNames(r)
	endpoints := map[string]refEndpoint{}
	for _, e := range r.Endpoints {
		endpoints[e.Name] = e
	}
	goNames := newGoIndex(t, map[string]string{"a55": "..", "payonce": "../.."})
	tests := testFuncs(t, "../..")

	rowOf := map[string]int{}
	for _, row := range docTable(t) {
		at := "docs/a55.md:" + strconv.Itoa(row.line)
		names := spans(row.names)
		require.NotEmpty(t, names, "%s: a row names the reference", at)
		urls := map[string]bool{}
		for _, u := range pageURL.FindAllString(row.page, -1) {
			urls[strings.TrimRight(u, ".,;")] = true
		}
		assert.NotEmpty(t, urls, "%s: a row gives its pages", at)
		rowTests := spans(row.test)
		assert.NotEmpty(t, rowTests, "%s: a row names the tests that hold it", at)
		assert.NotEmpty(t, strings.TrimSpace(row.fake), "%s: a row says what the fake does", at)
		for _, test := range rowTests {
			assert.True(t, tests[test], "%s: no test %s", at, test)
		}
		for _, name := range spans(row.client) {
			assert.True(t, goNames.resolve(name), "%s: %s is no Go name of package a55 (or payonce)", at, name)
		}
		for _, group := range names {
			for _, name := range expand(group) {
				page, ok := documented[name]
				if !assert.True(t, ok, "%s: %s is not a name of reference.json", at, name) {
					continue
				}
				if prev, dup := rowOf[name]; dup {
					assert.Fail(t, "a name has two rows", "%s: %s also on line %d", at, name, prev)
				}
				rowOf[name] = row.line
				assert.True(t, urls[page], "%s: %s's page %s is not in the row", at, name, page)
				if e, ok := endpoints[name]; ok {
					line := row.names + row.client + row.fake
					assert.Contains(t, line, e.Method+" "+e.Path, "%s: %s's row gives its method and path", at, name)
					assert.True(t, slices.ContainsFunc(rowTests, func(s string) bool { return strings.HasPrefix(s, "TestContract") }),
						"%s: %s's row names a contract test, which runs against the sandbox too", at, name)
				}
			}
		}
	}
	var missing []string
	for name := range documented {
		if _, ok := rowOf[name]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	assert.Empty(t, missing, "documented names without a row in docs/a55.md's table")
}

// The check itself: braces expand, Go names resolve through fields,
// embedded fields, methods and packages, and a name that does not exist
// does not.
func TestDocTableCheckRefusesWhatDoesNotExist(t *testing.T) {
	assert.ElementsMatch(t, []string{"a.x.c", "a.y.c", "a.y.d", "a.x.d"}, expand("a.{x,y}.{c,d}"))
	assert.Equal(t, []string{"status:issued"}, expand("status:issued"))
	g := newGoIndex(t, map[string]string{"a55": "..", "payonce": "../.."})
	for _, ok := range []string{"Charge", "a55.Charge.UUID", "Charge.Pix.QRCode", "ChargeCreateRequest.Card.Number",
		"Charge.Meta.Replayed", "Charge.Meta.RateLimit.Limit", "ChargesService.Create", "Client.WithAccount()", "Sandbox.TokenURL",
		"StatusIssued", "payonce.ErrInvalidRequest", "ErrCardDeclined", "Charge.Total"} {
		assert.True(t, g.resolve(ok), ok)
	}
	for _, bad := range []string{"Charge.NoSuchField", "NoSuchType", "ChargesService.Delete", "payonce.ErrNope", "Charge.UUID.X",
		"issued", "Charge.CreatedAt.Unix", "other.Charge"} {
		assert.False(t, g.resolve(bad), bad)
	}
	tests := testFuncs(t, "../..")
	assert.True(t, tests["TestDocTableCoversTheReference"])
	assert.True(t, tests["TestWalletsOfferOnlyWhatA55Documents"], "tests of other packages count")
	assert.False(t, tests["TestNoSuchTest"])
	names := referenceNames(loadRef(t))
	for _, n := range []string{"create_charge", "create_charge.payer_address.street", "refund_charge/charge_uuid", "list_charges?filter",
		"create_charge:pix_payload.qr_code", "guide_form.card.number", "status:issued", "code:TIMEOUT", "return_code:05",
		"webhook.charge_uuid", "header:X-Webhook-Signature", "get_wallet?customer_id"} {
		assert.Contains(t, names, n)
	}
	assert.Equal(t, "https://docs.a55.tech/docs/api-reference/subscription/create-subscription", names["create_charge.subscription.cycle"],
		"a member without a page has its parent's")
}

// goIndex knows the declarations of some packages' non-test files.
type goIndex struct {
	pkgs map[string]*goPkg
}

type goPkg struct {
	types   map[string]ast.Expr            // type name → its type expression
	values  map[string]string              // func, var or const name → its type name ("" when none)
	methods map[string]map[string]struct{} // type name → method names
}

func newGoIndex(t *testing.T, dirs map[string]string) *goIndex {
	t.Helper()
	g := &goIndex{pkgs: map[string]*goPkg{}}
	fset := token.NewFileSet()
	for name, dir := range dirs {
		p := &goPkg{types: map[string]ast.Expr{}, values: map[string]string{}, methods: map[string]map[string]struct{}{}}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						p.values[d.Name.Name] = ""
						continue
					}
					recv := typeName(d.Recv.List[0].Type)
					if p.methods[recv] == nil {
						p.methods[recv] = map[string]struct{}{}
					}
					p.methods[recv][d.Name.Name] = struct{}{}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							p.types[s.Name.Name] = s.Type
						case *ast.ValueSpec:
							for _, n := range s.Names {
								p.values[n.Name] = typeName(s.Type)
							}
						}
					}
				}
			}
		}
		g.pkgs[name] = p
	}
	return g
}

// typeName is the name of a (pointer to a) named type of the package,
// "" for any other expression.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr: // a generic receiver
		return typeName(x.X)
	}
	return ""
}

// resolve reports whether a Go name of the table exists: a declaration
// of package a55 ("a55." optional) or of payonce ("payonce."), then a
// chain of fields (embedded ones too) and at most one method at its end;
// a trailing "()" is allowed.
func (g *goIndex) resolve(name string) bool {
	name = strings.TrimSuffix(name, "()")
	pkg := "a55"
	if rest, ok := strings.CutPrefix(name, "payonce."); ok {
		pkg, name = "payonce", rest
	} else {
		name = strings.TrimPrefix(name, "a55.")
	}
	parts := strings.Split(name, ".")
	p := g.pkgs[pkg]
	if _, ok := p.types[parts[0]]; ok {
		return g.member(pkg, parts[0], parts[1:])
	}
	typ, ok := p.values[parts[0]]
	switch {
	case !ok:
		return false
	case len(parts) == 1:
		return true
	case typ == "":
		return false
	}
	return g.member(pkg, typ, parts[1:])
}

// member resolves rest on the named type typ of pkg.
func (g *goIndex) member(pkg, typ string, rest []string) bool {
	if len(rest) == 0 {
		return true
	}
	p := g.pkgs[pkg]
	if p == nil {
		return false
	}
	if _, ok := p.methods[typ][rest[0]]; ok {
		return len(rest) == 1
	}
	st, ok := p.types[typ].(*ast.StructType)
	if !ok {
		if id, ok := p.types[typ].(*ast.Ident); ok { // type A B: B's fields
			return g.member(pkg, id.Name, rest)
		}
		return false
	}
	for _, f := range st.Fields.List {
		fpkg, ftyp := fieldType(pkg, f.Type)
		if len(f.Names) == 0 { // embedded: its name is its type's
			if ftyp == rest[0] {
				return g.member(fpkg, ftyp, rest[1:])
			}
			if g.member(fpkg, ftyp, rest) {
				return true
			}
			continue
		}
		for _, n := range f.Names {
			if n.Name == rest[0] {
				return len(rest) == 1 || g.member(fpkg, ftyp, rest[1:])
			}
		}
	}
	return false
}

// fieldType is the package and name of a field's type, through
// pointers, slices and maps' values; "" for a type of another package.
func fieldType(pkg string, e ast.Expr) (string, string) {
	switch x := e.(type) {
	case *ast.StarExpr:
		return fieldType(pkg, x.X)
	case *ast.ArrayType:
		return fieldType(pkg, x.Elt)
	case *ast.MapType:
		return fieldType(pkg, x.Value)
	case *ast.Ident:
		return pkg, x.Name
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && id.Name == "payonce" {
			return "payonce", x.Sel.Name
		}
	}
	return "", ""
}

// testFuncs are the test, example, fuzz and benchmark functions of the
// module under root (nested modules and testdata aside).
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				for _, prefix := range []string{"Test", "Example", "Fuzz", "Benchmark"} {
					if strings.HasPrefix(fn.Name.Name, prefix) {
						out[fn.Name.Name] = true
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
