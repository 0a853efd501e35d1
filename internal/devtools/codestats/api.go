package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// interfaceMethods are the method names that only satisfy the error, fmt,
// encoding and slog interfaces.
var interfaceMethods = map[string]bool{
	"Error": true, "Unwrap": true, "String": true, "Format": true, "GoString": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true, "LogValue": true,
}

// apiCount is a package's exported identifiers, sorted.
type apiCount struct {
	top     []string // "func NewClient", "type Key", "var ErrJournal", ...
	methods []string // "Key.String", ...
}

func (c apiCount) total() int { return len(c.top) + len(c.methods) }

// strict is the count without the methods in interfaceMethods.
func (c apiCount) strict() int {
	n := len(c.top)
	for _, m := range c.methods {
		if !interfaceMethods[m[strings.Index(m, ".")+1:]] {
			n++
		}
	}
	return n
}

// countAPI counts the exported identifiers of the package in dir, its test
// files left out.
func countAPI(dir string) (apiCount, error) {
	files, err := parseDir(dir)
	if err != nil {
		return apiCount{}, err
	}
	var c apiCount
	types := map[string]bool{}
	var funcs []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							types[s.Name.Name] = true
							c.top = append(c.top, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								c.top = append(c.top, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			case *ast.FuncDecl:
				funcs = append(funcs, d)
			}
		}
	}
	for _, fd := range funcs {
		if !fd.Name.IsExported() {
			continue
		}
		if fd.Recv == nil {
			c.top = append(c.top, "func "+fd.Name.Name)
			continue
		}
		if recv := receiverName(fd.Recv.List[0].Type); types[recv] {
			c.methods = append(c.methods, recv+"."+fd.Name.Name)
		}
	}
	sort.Strings(c.top)
	sort.Strings(c.methods)
	return c, nil
}

// parseDir parses the package's Go files in dir, its tests left out.
func parseDir(dir string) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// receiverName is the type name of a method's receiver (T, *T, T[P]).
func receiverName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
