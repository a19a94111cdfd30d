package workshop

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// exercises holds the starter locks and their solutions: _exercises/LANG
// and _exercises/LANG-solution, one per pitfall. The leading underscore
// keeps the Go ones out of this module's builds: the starters fail their
// grade on purpose, and each is built as a module of its own in the
// folder the workshop writes.
//
//go:embed _exercises
var exercises embed.FS

// Exercises are the pitfalls of the fix-it exercises, in the order to do
// them: each builds on the lock the one before it fixes.
var Exercises = []string{"del-release", "no-renewal", "non-reentrant", "failover"}

// languages are the exercises' languages: the folder under fix/, the
// starter's file in it, and how a student grades it.
var languages = []struct{ Name, File, Grade string }{
	{"go", "%s/lock.go", "cd fix/go/%[1]s && go test"},
	{"python", "%s.py", "check -lock exec:'/usr/bin/python3 fix/python/%[1]s.py' -grade %[1]s"},
	{"php", "%s.php", "check -lock exec:'php fix/php/%[1]s.php' -grade %[1]s"},
}

// goTest is the whole test of a Go exercise: locklab's grade.
const goTest = `package lock

import (
	"flag"
	"testing"

	"github.com/locklab/locklab/workshop"
)

var explore = flag.Duration("explore", 0, "once every scenario passes, explore the lock this long with random faults")

// TestLock grades the lock in the scenarios where the catalogue shows the
// fix of pitfall %[1]s; each run's page is under runs/.
func TestLock(t *testing.T) { workshop.GradeTest(t, %[1]q, New, *explore) }
`

// writeFix writes the starters into the class folder and the solutions
// into the teacher's; the Go ones only with a locklab source tree to
// build against.
func writeFix(class, teacher, source string) error {
	for _, lang := range languages {
		if lang.Name == "go" && source == "" {
			continue
		}
		for _, ex := range Exercises {
			file := fmt.Sprintf(lang.File, ex)
			for _, to := range []struct{ from, dir string }{{lang.Name, filepath.Join(class, "fix", lang.Name)}, {lang.Name + "-solution", filepath.Join(teacher, "solutions", lang.Name)}} {
				b, err := exercises.ReadFile(path.Join("_exercises", to.from, file))
				if err != nil {
					return fmt.Errorf("workshop: %w", err)
				}
				if err := writeFile(filepath.Join(to.dir, file), b); err != nil {
					return err
				}
				if lang.Name == "go" {
					if err := writeGoModule(filepath.Join(to.dir, ex), ex, source); err != nil {
						return err
					}
				}
			}
		}
	}
	return writeFixIndex(class, source != "")
}

// writeGoModule makes dir a Go module of its own that builds offline
// against the locklab source tree: its go.mod requires what locklab
// requires and replaces locklab with the tree, and its go.sum is
// locklab's.
func writeGoModule(dir, ex, source string) error {
	mod, err := os.ReadFile(filepath.Join(source, "go.mod"))
	if err != nil {
		return fmt.Errorf("workshop: the Go exercises need the locklab source tree: %w", err)
	}
	sum, err := os.ReadFile(filepath.Join(source, "go.sum"))
	if err != nil {
		return fmt.Errorf("workshop: %w", err)
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return fmt.Errorf("workshop: %w", err)
	}
	goVersion := regexp.MustCompile(`(?m)^go .*$`).Find(mod)
	requires := regexp.MustCompile(`(?ms)^require \(.*?^\)\n|^require [^(].*?\n`).FindAll(mod, -1)
	var b strings.Builder
	fmt.Fprintf(&b, "module workshop/%s\n\n%s\n\nrequire github.com/locklab/locklab v0.0.0\n\n", ex, goVersion)
	fmt.Fprintf(&b, "// The locklab source tree this workshop was written from; change the\n// path if the tree moves.\nreplace github.com/locklab/locklab => %s\n\n", abs)
	b.WriteString("// What locklab requires, so that the exercise builds offline.\n")
	for _, r := range requires {
		b.Write(r)
	}
	if err := writeFile(filepath.Join(dir, "go.mod"), []byte(b.String())); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "go.sum"), sum); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "lock_test.go"), []byte(fmt.Sprintf(goTest, ex)))
}

func writeFile(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return fmt.Errorf("workshop: %w", err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("workshop: %w", err)
	}
	return nil
}

var fixBody = template.Must(template.New("fix").Parse(`
<p>Each starter lock is broken in one way, the way of the pitfall it is named after. Fix it until its grade passes: the grade runs it through the scenarios where locklab's catalogue shows that pitfall's fix, against real servers and real faults, and names each scenario it still fails with the page of that run. Do them in order: each starter is the fix of the one before.</p>
<table><tr><th>exercise</th><th>starters</th><th>grade</th></tr>
{{range .Rows}}<tr><td><a href="../predict/{{.Page}}">{{.Name}}</a></td><td>{{range .Files}}<a href="{{.Href}}">{{.Name}}</a> {{end}}</td><td>{{range .Grades}}<code>{{.}}</code><br>{{end}}</td></tr>
{{end}}</table>
<p>The Go exercises are modules of their own: <code>go test</code> in one builds it against the locklab source tree named in its <code>go.mod</code> (no network needed), and writes each run's page under <code>runs/</code>; <code>go test -explore=1m</code> then explores the lock with random faults. The Python and PHP ones are lock programs on locklab's line protocol (stdin/stdout), graded by <code>check</code>, which exits 1 while a scenario still fails; build it once with <code>go build -o check ./cmd/check</code> so that the exit code is its own.</p>
`))

// writeFixIndex writes fix/index.html: the exercises and how to grade them.
func writeFixIndex(class string, withGo bool) error {
	type row struct {
		Name, Page string
		Files      []link
		Grades     []string
	}
	var rows []row
	for _, ex := range Exercises {
		r := row{Name: ex}
		if m, _ := fs.Glob(os.DirFS(filepath.Join(class, "predict")), "*-"+ex+".html"); len(m) > 0 {
			r.Page = m[0]
		}
		for _, lang := range languages {
			if lang.Name == "go" && !withGo {
				continue
			}
			f := fmt.Sprintf(lang.File, ex)
			r.Files = append(r.Files, link{lang.Name, path.Join(lang.Name, f)})
			r.Grades = append(r.Grades, fmt.Sprintf(lang.Grade, ex))
		}
		rows = append(rows, r)
	}
	body, err := render(fixBody, struct{ Rows []row }{rows})
	if err != nil {
		return err
	}
	return writePage(filepath.Join(class, "fix", "index.html"), "Fix it", []link{{"workshop", "../index.html"}}, body)
}
