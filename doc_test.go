package payonce

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Every exported function, method (of an exported type) and type of the
// module has a doc comment that starts with its name (a type's may start
// with "A", "An" or "The" first).
func TestExportedIdentifiersHaveDocComments(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		check := func(pos token.Pos, name string, doc *ast.CommentGroup, article bool) {
			if doc == nil {
				t.Errorf("%s: exported %s has no doc comment", fset.Position(pos), name)
				return
			}
			words := strings.Fields(doc.Text())
			if article && len(words) > 1 && (words[0] == "A" || words[0] == "An" || words[0] == "The") {
				words = words[1:]
			}
			if len(words) == 0 || strings.TrimRight(words[0], ":,") != name || strings.HasSuffix(words[0], ":") {
				t.Errorf("%s: doc comment of %s does not start with its name", fset.Position(pos), name)
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil {
					rt := d.Recv.List[0].Type
					if s, ok := rt.(*ast.StarExpr); ok {
						rt = s.X
					}
					if id, ok := rt.(*ast.Ident); ok && !id.IsExported() {
						continue
					}
				}
				check(d.Pos(), d.Name.Name, d.Doc, false)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						doc := ts.Doc
						if doc == nil && len(d.Specs) == 1 {
							doc = d.Doc
						}
						check(ts.Pos(), ts.Name.Name, doc, true)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
