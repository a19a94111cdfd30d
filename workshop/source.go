package workshop

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"reflect"
	"runtime"
	"strings"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reference"
)

// maxExcerpt is the most lines of code a page quotes; a class reads a
// lock's Acquire and Release, not the whole file.
const maxExcerpt = 45

// excerpt is a short quote of a lock's code: where it is, and the code.
type excerpt struct {
	File string // e.g. pitfalls/del_release.go
	Code string
}

// sources are the packages whose locks a page can quote, by import path.
var sources = map[string]fs.FS{
	"github.com/locklab/locklab/pitfalls":  pitfalls.Source,
	"github.com/locklab/locklab/reference": reference.Source,
}

// lockExcerpt quotes the lock newLocker builds: its constructor, and the
// Acquire and Release of the file that defines the lock's type. It follows
// a constructor that only hands over to another package's, as
// pitfalls.NewTokenLock does to reference's.
func lockExcerpt(newLocker harness.NewLocker) (excerpt, error) {
	full := runtime.FuncForPC(reflect.ValueOf(newLocker).Pointer()).Name()
	dot := strings.LastIndex(full, ".")
	pkg, name := full[:dot], full[dot+1:]
	for range 3 {
		src, ok := sources[pkg]
		if !ok {
			return excerpt{}, fmt.Errorf("no source for %s", full)
		}
		files, fset, err := parseAll(src)
		if err != nil {
			return excerpt{}, err
		}
		file, ctor := findFunc(files, name)
		if ctor == nil {
			return excerpt{}, fmt.Errorf("no function %s in %s", name, pkg)
		}
		if next, ok := handsOver(ctor); ok {
			pkg, name = "github.com/locklab/locklab/"+next[0], next[1]
			continue
		}
		short := pkg[strings.LastIndex(pkg, "/")+1:] + "/" + file
		return excerpt{File: short, Code: quote(fset, files[file], ctor)}, nil
	}
	return excerpt{}, fmt.Errorf("%s hands over too many times", full)
}

// parseAll parses every Go file of src, by file name.
func parseAll(src fs.FS) (map[string]*ast.File, *token.FileSet, error) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	names, err := fs.Glob(src, "*.go")
	if err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := fs.ReadFile(src, n)
		if err != nil {
			return nil, nil, err
		}
		f, err := parser.ParseFile(fset, n, b, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		files[n] = f
	}
	return files, fset, nil
}

// findFunc finds the function (not a method) called name.
func findFunc(files map[string]*ast.File, name string) (string, *ast.FuncDecl) {
	for n, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return n, fd
			}
		}
	}
	return "", nil
}

// handsOver reports the package and function a one-line constructor
// returns the result of, as in `return reference.NewTokenLock(c)`.
func handsOver(fd *ast.FuncDecl) ([2]string, bool) {
	if len(fd.Body.List) != 1 {
		return [2]string{}, false
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return [2]string{}, false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return [2]string{}, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return [2]string{}, false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return [2]string{}, false
	}
	return [2]string{pkg.Name, sel.Sel.Name}, true
}

// quote prints the constructor and every Acquire and Release method of
// its file, cut at maxExcerpt lines.
func quote(fset *token.FileSet, f *ast.File, ctor *ast.FuncDecl) string {
	decls := []ast.Decl{ctor}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && (fd.Name.Name == "Acquire" || fd.Name.Name == "Release") {
			decls = append(decls, fd)
		}
	}
	var b bytes.Buffer
	for i, d := range decls {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fd := d.(*ast.FuncDecl)
		// With the file's comments: its doc and the comments inside it,
		// which a bare node would lose.
		printer.Fprint(&b, fset, &printer.CommentedNode{Node: fd, Comments: f.Comments})
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) > maxExcerpt {
		more := len(lines) - maxExcerpt
		lines = append(lines[:maxExcerpt], fmt.Sprintf("// … %d more lines in the file", more))
	}
	return strings.Join(lines, "\n")
}
