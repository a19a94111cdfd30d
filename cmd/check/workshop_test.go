package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/pitfalls"
)

// TestWorkshopCommand writes the workshop from the golden report, prints
// its quiz, and refuses bad input in one line with exit 2.
func TestWorkshopCommand(t *testing.T) {
	out := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout, or in stderr when the code is 2
	}{
		{"folder", []string{"workshop", "-from", golden(t), "-out", out, "-source", ""}, exitOK, fmt.Sprintf("%d pitfalls", len(pitfalls.Catalogue()))},
		{"quiz", []string{"workshop", "-quiz", "-from", golden(t)}, exitOK, "History 1: legal or illegal?"},
		{"quiz with answers", []string{"workshop", "-quiz", "-answers", "-from", golden(t)}, exitOK, "Answer key"},
		{"no report", []string{"workshop", "-from", filepath.Join(out, "missing")}, exitUsage, "is not a report folder"},
		{"argument", []string{"workshop", "extra"}, exitUsage, `unexpected argument "extra"`},
		{"grade without lock", []string{"-grade", "del-release"}, exitUsage, "-grade PITFALL goes with -lock NAME"},
		{"grade unknown pitfall", []string{"-lock", "redislock", "-grade", "nope"}, exitUsage, `unknown pitfall "nope"`},
		{"grade without a fix", []string{"-lock", "redislock", "-grade", "failover-wait", "-out", out}, exitMismatch, "has no fix to grade against"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			got := stdout.String()
			if code != exitOK {
				got = stderr.String()
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("check %v: exit %d, want %d with %q; stdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, tc.want, stdout.String(), stderr.String())
			}
			if code == exitUsage && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("bad input takes one line, got:\n%s", stderr.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(out, "class", "fix", "python", "del-release.py")); err != nil {
		t.Error(err)
	}
}

// TestGradeProgram grades the Python starter of del-release, which must
// fail naming pause-before-del and linking its run's page (exit 1), and
// the teacher's solution, which must pass (exit 0).
func TestGradeProgram(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server (make deps installs it)")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		t.Skip("no python3-redis (make deps installs it)")
	}
	ws := t.TempDir()
	var sink bytes.Buffer
	if code := run(context.Background(), []string{"workshop", "-from", golden(t), "-out", ws, "-source", ""}, &sink, &sink); code != exitOK {
		t.Fatalf("check workshop: exit %d: %s", code, sink.String())
	}
	for _, tc := range []struct {
		name, program string
		code          int
		want          string
	}{
		{"starter", filepath.Join(ws, "class", "fix", "python", "del-release.py"), exitMismatch, "FAIL pause-before-del: lock: got illegal, expected ok"},
		{"solution", filepath.Join(ws, "teacher", "solutions", "python", "del-release.py"), exitOK, "PASS pause-before-del"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"-lock", "exec:/usr/bin/python3 " + tc.program, "-grade", "del-release", "-out", out}, &stdout, &stderr)
			page := filepath.Join(out, "del-release-pause-before-del", "run.html")
			if code != tc.code || !strings.Contains(stdout.String(), tc.want) || !strings.Contains(stdout.String(), page) {
				t.Errorf("exit %d, want %d with %q and %s; stdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, page, stdout.String(), stderr.String())
			}
			if _, err := os.Stat(page); err != nil {
				t.Error(err)
			}
		})
	}
}
