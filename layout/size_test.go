package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Limits a newcomer can read in one sitting: a package's Go
// code, its tests left out, and a function's lines and branches (if, for,
// case, &&, ||). A function that is a data table (no branch at all) has no
// line limit.
const (
	maxPackageLines  = 2000
	maxFuncLines     = 100
	maxFuncBranches  = 30
	repositoryPrefix = "../"
)

// overgrown are the packages still over maxPackageLines, each with its
// size when the limit was set; the test fails when one grows, or falls
// under the limit and should leave this list.
var overgrown = map[string]int{}

// TestSizes checks every package and function of the repository against
// the limits.
func TestSizes(t *testing.T) {
	lines := map[string]int{} // package directory → lines
	fset := token.NewFileSet()
	err := filepath.WalkDir(repositoryPrefix, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repositoryPrefix && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := strings.TrimPrefix(filepath.Dir(path), repositoryPrefix)
		lines[dir] += strings.Count(string(src), "\n")
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				checkFunc(t, fset, fd)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, n := range lines {
		was, listed := overgrown[dir]
		switch {
		case n > maxPackageLines && !listed:
			t.Errorf("%s: %d lines of Go, over %d: split it by concern", dir, n, maxPackageLines)
		case listed && n > was:
			t.Errorf("%s: %d lines of Go, grown from %d, over %d", dir, n, was, maxPackageLines)
		case listed && n <= maxPackageLines:
			t.Errorf("%s: %d lines of Go, under %d now: take it out of overgrown", dir, n, maxPackageLines)
		}
	}
}

// checkFunc checks one function against the limits.
func checkFunc(t *testing.T, fset *token.FileSet, fd *ast.FuncDecl) {
	t.Helper()
	branches := 0
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.CaseClause, *ast.CommClause:
			branches++
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				branches++
			}
		}
		return true
	})
	start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
	lines := end.Line - start.Line + 1
	where := strings.TrimPrefix(start.Filename, repositoryPrefix)
	if lines > maxFuncLines && branches > 0 {
		t.Errorf("%s:%d: %s has %d lines, over %d", where, start.Line, fd.Name.Name, lines, maxFuncLines)
	}
	if branches > maxFuncBranches {
		t.Errorf("%s:%d: %s has %d branches, over %d", where, start.Line, fd.Name.Name, branches, maxFuncBranches)
	}
}
