package payonce

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every Go name the README and the pages under docs/ write in a code span,
// qualified by a package of the module (`payonce.WithReference`,
// `a55.Client.Charges`, `a55.ChargesService.SettleCreate`,
// `journal.NewMemory`), exists: a renamed or removed name cannot live on
// in the prose, as docsnippets_test.go keeps it out of the code blocks.
// The module's packages are read with go/parser, test files left out: a
// doc names what a merchant can call.

// goName matches a qualified Go name in a code span: a package name, then
// one exported name or more (a type, then its field or method).
var goName = regexp.MustCompile(`(?:^|[^\w./])([a-z][a-z0-9]*)((?:\.[A-Z]\w*)+)`)

// codeSpan matches an inline code span (fenced blocks removed first).
var codeSpanRE = regexp.MustCompile("`[^`\n]+`")

// fence matches a fenced code block, which docsnippets_test.go checks.
var fence = regexp.MustCompile("(?s)```.*?```")

func TestDocNamesExist(t *testing.T) {
	idx := loadModuleNames(t)
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	pages = append([]string{"README.md"}, pages...)
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		// Blank fenced blocks, keeping their new lines so line numbers hold.
		text := fence.ReplaceAllStringFunc(string(b), func(s string) string {
			return strings.Repeat("\n", strings.Count(s, "\n"))
		})
		for _, span := range codeSpanRE.FindAllStringIndex(text, -1) {
			line := strings.Count(text[:span[0]], "\n") + 1
			code := text[span[0]+1 : span[1]-1]
			for _, loc := range goName.FindAllStringSubmatchIndex(code, -1) {
				pkg, qual := code[loc[2]:loc[3]], code[loc[4]:loc[5]]
				if !idx.isPackage(pkg) || strings.HasPrefix(code[loc[5]:], "*") {
					continue // another module's package, or a pattern (payonce.Err*)
				}
				names := strings.Split(qual[1:], ".")
				checked++
				if why := idx.resolve(pkg, names); why != "" {
					t.Errorf("%s:%d: `%s%s`: %s", page, line, pkg, qual, why)
				}
			}
		}
	}
	t.Logf("%d names checked", checked)
	assert.Greater(t, checked, 300, "the name pattern found almost no names")
}

func TestDocNamesResolve(t *testing.T) {
	idx := loadModuleNames(t)
	for _, ok := range []string{"payonce.WithReference", "a55.Client.Charges.Create", "a55.ChargesService.SettleCreate",
		"journal.NewMemory", "payonce.Card.Number", "a55.ResponseMeta.Key", "a55test.Server.Ledger", "payonce.Currency.Decimals",
		"journal.ErrNotFound", "a55test.ChargePath"} {
		parts := strings.Split(ok, ".")
		assert.Empty(t, idx.resolve(parts[0], parts[1:]), ok)
	}
	for _, bad := range []string{"payonce.NoSuchName", "a55.Client.Nothing", "a55.Client.Charges.Nothing", "journal.NewMemory.X"} {
		parts := strings.Split(bad, ".")
		assert.NotEmpty(t, idx.resolve(parts[0], parts[1:]), bad)
	}
	assert.False(t, idx.isPackage("http"), "a package of another module is not checked")
}

// moduleNames indexes the exported declarations of the module's packages.
type moduleNames struct {
	byName map[string][]string      // package name -> import paths
	pkgs   map[string]*packageNames // import path -> its names
}

// packageNames are one package's top-level names and its types' members.
type packageNames struct {
	path    string
	top     map[string]bool
	types   map[string]*typeNames
	imports map[string]string // a file's import name -> path, for embedded and field types
}

// typeNames are a type's fields and methods: a field's type, when it names
// a type of the module, lets a chain go on (a55.Client.Charges.Create).
type typeNames struct {
	members  map[string]ast.Expr // field or method -> field type (nil for a method)
	embedded []ast.Expr
	under    ast.Expr // type X = Y or type X Y: Y's members count too
}

var (
	moduleNamesOnce *moduleNames
	modulePath      = "github.com/payonce/payonce"
)

func loadModuleNames(t *testing.T) *moduleNames {
	t.Helper()
	if moduleNamesOnce != nil {
		return moduleNamesOnce
	}
	idx := &moduleNames{byName: map[string][]string{}, pkgs: map[string]*packageNames{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == "." {
				return nil
			}
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own (bench/)
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		path := modulePath
		if dir := filepath.ToSlash(filepath.Dir(p)); dir != "." {
			path += "/" + dir
		}
		pn := idx.pkgs[path]
		if pn == nil {
			pn = &packageNames{path: path, top: map[string]bool{}, types: map[string]*typeNames{}, imports: map[string]string{}}
			idx.pkgs[path] = pn
			idx.byName[f.Name.Name] = append(idx.byName[f.Name.Name], path)
		}
		pn.addFile(f)
		return nil
	})
	require.NoError(t, err)
	moduleNamesOnce = idx
	return idx
}

func (pn *packageNames) typ(name string) *typeNames {
	tn := pn.types[name]
	if tn == nil {
		tn = &typeNames{members: map[string]ast.Expr{}}
		pn.types[name] = tn
	}
	return tn
}

func (pn *packageNames) addFile(f *ast.File) {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		pn.imports[name] = p // names are read per package; the module uses one name per path
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				pn.top[d.Name.Name] = true
				continue
			}
			if recv := receiverName(d.Recv.List[0].Type); recv != "" {
				pn.typ(recv).members[d.Name.Name] = nil
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						pn.top[n.Name] = true
					}
				case *ast.TypeSpec:
					pn.top[s.Name.Name] = true
					tn := pn.typ(s.Name.Name)
					switch u := s.Type.(type) {
					case *ast.StructType:
						for _, fl := range u.Fields.List {
							if len(fl.Names) == 0 {
								tn.embedded = append(tn.embedded, fl.Type)
								if n := typeExprName(fl.Type); n != "" {
									tn.members[n] = fl.Type
								}
							}
							for _, n := range fl.Names {
								tn.members[n.Name] = fl.Type
							}
						}
					case *ast.InterfaceType:
						for _, m := range u.Methods.List {
							if len(m.Names) == 0 {
								tn.embedded = append(tn.embedded, m.Type)
							}
							for _, n := range m.Names {
								tn.members[n.Name] = nil
							}
						}
					default:
						tn.under = s.Type
					}
				}
			}
		}
	}
}

// receiverName is the type name of a method's receiver: T, *T, T[P], *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// typeExprName is the name an embedded field is known by: T of *T or p.T.
func typeExprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeExprName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return typeExprName(x.X)
	}
	return ""
}

// isPackage reports whether the docs' pkg is a package of the module.
func (idx *moduleNames) isPackage(pkg string) bool { return len(idx.byName[pkg]) > 0 }

// resolve says why pkg.names[0].names[1]... names nothing of the module
// ("" when it does).
func (idx *moduleNames) resolve(pkg string, names []string) string {
	for _, path := range idx.byName[pkg] {
		pn := idx.pkgs[path]
		if !pn.top[names[0]] {
			continue
		}
		if len(names) == 1 {
			return ""
		}
		if idx.member(pn, names[0], names[1:], 0) {
			return ""
		}
		return "package " + pkg + " has " + names[0] + ", but not " + strings.Join(names[1:], ".")
	}
	return "package " + pkg + " has no " + names[0]
}

// member reports whether type typ of pn has the chain of members names,
// directly, through an embedded type or through the type it is defined as.
func (idx *moduleNames) member(pn *packageNames, typ string, names []string, depth int) bool {
	tn := pn.types[typ]
	if tn == nil || depth > 8 {
		return false
	}
	if ft, ok := tn.members[names[0]]; ok {
		if len(names) == 1 {
			return true
		}
		if ft == nil {
			return false // a method ends the chain
		}
		if p2, t2 := idx.namedType(pn, ft); p2 != nil && idx.member(p2, t2, names[1:], depth+1) {
			return true
		}
	}
	others := tn.embedded
	if tn.under != nil {
		others = append(others[:len(others):len(others)], tn.under)
	}
	for _, e := range others {
		if p2, t2 := idx.namedType(pn, e); p2 != nil && idx.member(p2, t2, names, depth+1) {
			return true
		}
	}
	return false
}

// namedType resolves a type expression of pn to a type of the module.
func (idx *moduleNames) namedType(pn *packageNames, e ast.Expr) (*packageNames, string) {
	switch x := e.(type) {
	case *ast.StarExpr:
		return idx.namedType(pn, x.X)
	case *ast.IndexExpr:
		return idx.namedType(pn, x.X)
	case *ast.Ident:
		return pn, x.Name
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		if !ok {
			return nil, ""
		}
		if p2 := idx.pkgs[pn.imports[id.Name]]; p2 != nil {
			return p2, x.Sel.Name
		}
	}
	return nil, ""
}
