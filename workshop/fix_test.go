package workshop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoExercise grades the Go starter of del-release, which must fail
// naming pause-before-del and its run's page, and the teacher's solution,
// which must pass: each with `go test` in the module the workshop wrote,
// built offline against this source tree.
func TestGoExercise(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two modules with go test: 20 to 70 s, by the machine's load")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server (make deps installs it)")
	}
	out := t.TempDir()
	if _, err := Write(Options{From: from(), Out: out, Source: ".."}); err != nil {
		t.Fatal(err)
	}
	// -trimpath, as make sets it, keeps the folders out of the build cache's
	// keys, so these modules reuse what the tree's own build compiled; without
	// it a fresh machine compiles locklab and every dependency again (about
	// 3 min of a cold build here, against 1 min). One build before the two
	// runs, so that they do not compile the same packages side by side.
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly -trimpath")
	starter := filepath.Join(out, ClassDir, "fix", "go", "del-release")
	build := exec.Command("go", "test", "-count=1", "-vet=off", "-run", "^$", ".")
	build.Dir, build.Env = starter, env
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -run '^$' in %s: %v\n%s", starter, err, b)
	}
	for _, tc := range []struct {
		name, dir string
		pass      bool
		want      string
	}{
		{"starter", starter, false, "FAIL pause-before-del: lock: got illegal, expected ok"},
		{"solution", filepath.Join(out, TeacherDir, "solutions", "go", "del-release"), true, "PASS pause-before-del"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-vet=off", "-v", ".")
			cmd.Dir = tc.dir
			cmd.Env = env
			b, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("go test did not end: %s", b)
			}
			if (err == nil) != tc.pass || !strings.Contains(string(b), tc.want) || !strings.Contains(string(b), "runs/del-release-pause-before-del/run.html") {
				t.Errorf("go test in %s: %v, want pass=%v and %q with its run's page:\n%s", tc.dir, err, tc.pass, tc.want, b)
			}
			if _, err := os.Stat(filepath.Join(tc.dir, "runs", "del-release-pause-before-del", "run.html")); err != nil {
				t.Error(err)
			}
		})
	}
}
