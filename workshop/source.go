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

	"github.com/locklab/locklab/broken"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/service"
)

// maxExcerpt is the most lines of code a page quotes; a class reads a
// lock's Acquire and Release, not the whole file.
const maxExcerpt = 45

// excerpt is a short quote of a lock's code: where it is, and the code.
type excerpt struct {
	File string // e.g. pitfalls/del_release.go
	Code string
}

// sources are the packages whose locks a page can quote, by import path:
// the broken locks', the correct ones', and each lock service's.
func sources() map[string]fs.FS {
	srcs := map[string]fs.FS{
		"github.com/locklab/locklab/broken":    broken.Source,
		"github.com/locklab/locklab/reference": reference.Source,
	}
	for _, s := range service.All() {
		srcs[reflect.TypeOf(s).PkgPath()] = s.Source()
	}
	return srcs
}

// lockExcerpt quotes the lock the registry names name: its constructor,
// and the Acquire and Release of the file that defines the lock's type. It
// follows a constructor that only hands over to another package's, as
// broken.NewGetLockPool does to reference's GetLock.
func lockExcerpt(name string) (excerpt, error) {
	lock, err := locks.Lookup(name)
	if err != nil {
		return excerpt{}, err
	}
	full := runtime.FuncForPC(reflect.ValueOf(lock.New).Pointer()).Name()
	dot := strings.LastIndex(full, ".")
	pkg, name := full[:dot], full[dot+1:]
	for range 3 {
		src, ok := sources()[pkg]
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
		next, ok := handsOver(ctor)
		if !ok {
			short := pkg[strings.LastIndex(pkg, "/")+1:] + "/" + file
			return excerpt{File: short, Code: quote(fset, ctor, files[file])}, nil
		}
		pkg = importPath(files[file], next.pkg)
		if next.typ == "" {
			name = next.name
			continue
		}
		var b strings.Builder
		printer.Fprint(&b, fset, &printer.CommentedNode{Node: ctor, Comments: files[file].Comments})
		return typeExcerpt(pkg, next.typ, b.String())
	}
	return excerpt{}, fmt.Errorf("%s hands over too many times", full)
}

// typeExcerpt quotes a lock of package pkg's type typ, built with options
// (as memcached.Lock{PlainDelete: true}.For(c)): its constructor, ctor,
// which shows the options, then the type's Acquire and Release.
func typeExcerpt(pkg, typ, ctor string) (excerpt, error) {
	src, ok := sources()[pkg]
	if !ok {
		return excerpt{}, fmt.Errorf("no source for %s", pkg)
	}
	files, fset, err := parseAll(src)
	if err != nil {
		return excerpt{}, err
	}
	file := findType(files, typ)
	if file == "" {
		return excerpt{}, fmt.Errorf("no type %s in %s", typ, pkg)
	}
	short := pkg[strings.LastIndex(pkg, "/")+1:] + "/" + file
	return excerpt{File: short, Code: cut(ctor + "\n\n" + quote(fset, nil, files[file]))}, nil
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

// handover is where a one-line constructor hands over: a function of
// another package (`return reference.NewTokenLock(c)`), or a method of a
// value of another package's type (`return memcached.Lock{...}.For(c)`),
// named by the package's identifier in the file.
type handover struct {
	pkg  string // the identifier of the package
	name string // the function, when not a type's method
	typ  string // the type, when a method of its value
}

// handsOver reports where a one-line constructor hands over.
func handsOver(fd *ast.FuncDecl) (handover, bool) {
	if len(fd.Body.List) != 1 {
		return handover{}, false
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return handover{}, false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return handover{}, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return handover{}, false
	}
	switch x := sel.X.(type) {
	case *ast.Ident:
		return handover{pkg: x.Name, name: sel.Sel.Name}, true
	case *ast.CompositeLit:
		if t, ok := x.Type.(*ast.SelectorExpr); ok {
			if pkg, ok := t.X.(*ast.Ident); ok {
				return handover{pkg: pkg.Name, typ: t.Sel.Name}, true
			}
		}
	}
	return handover{}, false
}

// importPath is the path f imports as name (its last element, unless
// renamed).
func importPath(f *ast.File, name string) string {
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if imp.Name != nil && imp.Name.Name == name || imp.Name == nil && path[strings.LastIndex(path, "/")+1:] == name {
			return path
		}
	}
	return name
}

// findType is the file that declares the type called name, or "".
func findType(files map[string]*ast.File, name string) string {
	for n, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				if spec.(*ast.TypeSpec).Name.Name == name {
					return n
				}
			}
		}
	}
	return ""
}

// quote prints ctor, when not nil, and every Acquire and Release method of
// f, cut at maxExcerpt lines.
func quote(fset *token.FileSet, ctor *ast.FuncDecl, f *ast.File) string {
	var decls []ast.Decl
	if ctor != nil {
		decls = append(decls, ctor)
	}
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
	return cut(b.String())
}

// cut cuts code at maxExcerpt lines, saying how many more the file has.
func cut(code string) string {
	lines := strings.Split(code, "\n")
	if len(lines) > maxExcerpt {
		more := len(lines) - maxExcerpt
		lines = append(lines[:maxExcerpt], fmt.Sprintf("// … %d more lines in the file", more))
	}
	return strings.Join(lines, "\n")
}
