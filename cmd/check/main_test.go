package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
)

func TestUsageErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown pitfall", []string{"-pitfall", "nope"}, `unknown pitfall "nope"`},
		{"bad flag", []string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"negative duration", []string{"-duration", "-1s"}, "-duration must not be negative"},
		{"bad duration", []string{"-duration", "soon"}, "invalid value"},
		{"duration too short for the story", []string{"-pitfall", "failover", "-duration", "1s"}, "too short for scenario failover, whose story needs at least 5s"},
		{"stray argument", []string{"run"}, `unexpected argument "run"`},
		{"list with arguments", []string{"list", "x"}, "check list takes no arguments"},
		{"help with arguments", []string{"help", "x"}, "check help takes no arguments"},
		// Given but empty is not "every pitfall", which is the flag left out.
		{"empty pitfall", []string{"-pitfall", "", "-out", t.TempDir()}, "-pitfall names no pitfall"},
		{"blank pitfall", []string{"-pitfall", " ", "-out", t.TempDir()}, "-pitfall names no pitfall"},
		{"empty name in list", []string{"-pitfall", "4,", "-out", t.TempDir()}, `-pitfall "4," has an empty name`},
		{"empty name inside list", []string{"-pitfall", "4,,5", "-out", t.TempDir()}, `-pitfall "4,,5" has an empty name`},
		{"out is a file", []string{"-pitfall", "4", "-out", file}, "is a file, not a folder"},
		{"out under a file", []string{"-pitfall", "4", "-out", filepath.Join(file, "sub")}, "cannot make the folder"},
		{"empty out", []string{"-pitfall", "4", "-out", ""}, "-out must not be empty"},
		{"lock and pitfall", []string{"-lock", "redsync", "-pitfall", "4"}, "give -lock or -pitfall, not both"},
		{"unknown lock", []string{"-lock", "nope"}, `unknown lock "nope" (see`},
		{"empty lock", []string{"-lock", " "}, "-lock names no lock"},
		{"topology the lock lacks", []string{"-lock", "redsync", "-topology", "replicated"}, `lock redsync runs on single and redlock, not on topology "replicated"`},
		{"unknown topology", []string{"-lock", "redislock", "-topology", "ring"}, `not on topology "ring"`},
		{"topology without lock", []string{"-topology", "single"}, "-topology and -service go with -lock"},
		{"service without lock", []string{"-service", "etcd"}, "-topology and -service go with -lock"},
		{"unknown service", []string{"-lock", "redsync", "-service", "nope"}, `unknown service "nope"; the services are redis, mariadb, postgres, etcd`},
		{"service the lock lacks", []string{"-lock", "redsync", "-service", "etcd"}, "lock redsync runs on single and redlock, not on service etcd (etcd)"},
		{"service and topology", []string{"-lock", "redsync", "-service", "redis", "-topology", "single"}, "give -service or -topology, not both"},
		{"watch without runs named", []string{"-watch"}, "-watch draws the runs of -pitfall or -lock"},
		{"watch in parallel", []string{"-pitfall", "5", "-watch", "-parallel", "4"}, "-watch makes the runs one at a time"},
		{"watch with json", []string{"-pitfall", "5", "-watch", "-json"}, "-watch draws on stdout, where -json writes"},
		{"ttl without lock", []string{"-ttl", "1s"}, "-ttl goes with -lock"},
		{"ttl of nothing", []string{"-lock", "token", "-ttl", "0s"}, "-ttl must be a lease above 0"},
		{"duration too short for a lock's scenario", []string{"-lock", "redislock", "-topology", "replicated", "-duration", "1s"}, "too short for scenario failover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			msg := stderr.String()
			if !strings.Contains(msg, tt.want) || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q: want one line containing %q", msg, tt.want)
			}
		})
	}
}

// TestHelp: check help and check -h print the usage on stdout and exit 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"-help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
			t.Errorf("%v: exit %d", args, code)
		}
		for _, want := range []string{"usage: check", "check list", "-pitfall", "-lock NAME", "-topology", "-out", "locklab-report"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%v: stdout lacks %q:\n%s", args, want, stdout.String())
			}
		}
		if stderr.Len() > 0 {
			t.Errorf("%v: stderr %q", args, stderr.String())
		}
	}
}

// TestOutMadeBeforeRuns: a missing -out is made, nested too, before anything
// runs (here nothing does, as redis-server is missing).
func TestOutMadeBeforeRuns(t *testing.T) {
	t.Setenv("REDIS_SERVER", "")
	t.Setenv("PATH", t.TempDir())
	out := filepath.Join(t.TempDir(), "a", "b")
	run(context.Background(), []string{"-pitfall", "4", "-out", out}, io.Discard, io.Discard)
	if info, err := os.Stat(out); err != nil || !info.IsDir() {
		t.Errorf("-out %s was not made: %v", out, err)
	}
}

func TestList(t *testing.T) {
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"list"}, &stdout, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"setnx-expire", "non-reentrant", "pause-before-del", "liveness stuck"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, stdout.String())
		}
	}
	// Every lock has a line of its own in the LOCKS table: name, group,
	// topologies.
	lines := strings.Split(stdout.String(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "LOCK ") })
	if i < 0 {
		t.Fatalf("list has no LOCK table:\n%s", stdout.String())
	}
	for _, want := range []struct{ name, group, topologies string }{
		{"redsync", "library", "single and redlock"}, {"redsync-refresh", "library", "single and redlock"},
		{"redislock", "library", "single and replicated"}, {"redislock-refresh", "library", "single and replicated"},
		{"del-release", "broken", "single"}, {"get-then-del", "broken", "single"}, {"no-renewal", "broken", "single"},
		{"token", "correct", "single and replicated"}, {"token-watchdog", "correct", "single and replicated"},
		{"reentrant", "correct", "single and replicated"}, {"wait-replicas", "correct", "replicated"},
		{"redlock", "correct", "redlock"}, {"fenced", "correct", "single and replicated"},
	} {
		found := slices.ContainsFunc(lines[i+1:], func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 2 && f[0] == want.name && f[1] == want.group && strings.Contains(l, "  "+want.topologies+"  ")
		})
		if !found {
			t.Errorf("the LOCK table lacks %s (%s, %s)", want.name, want.group, want.topologies)
		}
	}
}

// TestLockMissingRedisServer: -lock stops as the catalogue does, in one line,
// when redis-server is missing.
func TestLockMissingRedisServer(t *testing.T) {
	t.Setenv("REDIS_SERVER", "")
	t.Setenv("PATH", t.TempDir())
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-lock", "redislock", "-out", t.TempDir()}, io.Discard, &stderr)
	if code != exitMismatch || !strings.Contains(stderr.String(), "make deps") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want 1 and one line naming make deps", code, stderr.String())
	}
}

func TestMissingRedisServer(t *testing.T) {
	t.Setenv("REDIS_SERVER", "")
	t.Setenv("PATH", t.TempDir())
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-pitfall", "4", "-out", t.TempDir()}, io.Discard, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "make deps") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want one line naming make deps", code, stderr.String())
	}
}

// TestJSON runs one pitfall and checks the schema of `check -json`.
func TestJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	out := t.TempDir()
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"-pitfall", "no-release", "-json", "-out", out}, &stdout, io.Discard)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stdout.String())
	}
	var runs []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &runs); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	keys := []string{"pitfall", "variant", "scenario", "seed", "verdicts", "expected", "pass", "detect_ms", "duration_ms", "report_dir"}
	// A failing verdict has its kind, and why, when it could be told, and
	// the reference's verdicts and runs when the history could not tell.
	optional := []string{"kinds", "kind_why", "reference", "reference_runs"}
	for i, r := range runs {
		for k := range r {
			if !slices.Contains(keys, k) && !slices.Contains(optional, k) {
				t.Errorf("run %d has key %q, want only %v and %v", i, k, keys, optional)
			}
		}
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Errorf("run %d lacks %q", i, k)
			}
		}
		if r["pass"] != true {
			t.Errorf("run %d did not pass: %v", i, r)
		}
	}
	if runs[0]["variant"] != "broken" || runs[1]["variant"] != "fixed" || runs[1]["detect_ms"] != nil {
		t.Errorf("runs = %v", runs)
	}
	for _, f := range []string{"index.html", "4-no-release-broken/history.jsonl", "4-no-release-fixed/lock.html", "4-no-release-broken/run.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestIndexKeepsEarlierRuns: a check of one pitfall into a folder that holds
// runs of others leaves them in index.html, in catalogue order, while its
// table shows only its own runs.
func TestIndexKeepsEarlierRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	out := t.TempDir()
	// What `check -pitfall 1` would have left: a run folder with run.json
	// and result.json.
	found, err := pitfalls.Lookup("setnx-expire")
	if err != nil {
		t.Fatal(err)
	}
	setnx := found[0]
	earlier := filepath.Join(out, "1-setnx-expire-broken")
	res := &runner.Result{Scenario: setnx.Scenario, Seed: 1, Duration: 2 * time.Second, Dir: earlier,
		Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.OK, checker.CheckResource: checker.OK,
			checker.CheckLiveness: checker.Stuck, checker.CheckHandover: checker.OK},
		Faults: []string{"failpoint: an earlier run's fault"}}
	if err := os.MkdirAll(earlier, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(earlier, runner.ResultFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reports.SaveRun(reports.NewRun(setnx, setnx.Cases()[0], res)); err != nil {
		t.Fatal(err)
	}

	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"-pitfall", "4", "-out", out}, &stdout, io.Discard); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stdout.String())
	}
	if strings.Contains(stdout.String(), "setnx-expire") || !strings.Contains(stdout.String(), "2 runs, 2 as expected") ||
		!strings.Contains(stdout.String(), "index.html (3 runs)") {
		t.Errorf("stdout should show this check's 2 runs and an index of 3:\n%s", stdout.String())
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, href := range []string{"1-setnx-expire-broken/result.json", "4-no-release-broken/lock.html", "4-no-release-fixed/result.json"} {
		if !strings.Contains(html, `href="`+href+`"`) {
			t.Errorf("index.html lacks a link to %s", href)
		}
	}
	for _, want := range []string{"3 runs, 3 as expected", "failpoint: an earlier run&#39;s fault"} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if i, j := strings.Index(html, `id="pitfall-setnx-expire"`), strings.Index(html, `id="pitfall-no-release"`); i < 0 || j < i {
		t.Error("index.html does not show setnx-expire before no-release, in catalogue order")
	}
}

// TestMissingMariaDB: without MariaDB the pitfall that needs it is skipped
// with the install hint, the others run, the index is written, and check
// exits 1.
func TestMissingMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	t.Setenv("MARIADB_BIN_DIR", t.TempDir())
	if _, _, err := local.MariaDBPath(); err == nil {
		t.Fatal("MariaDB found in an empty MARIADB_BIN_DIR")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-pitfall", "8,4", "-out", out}, &stdout, &stderr)
	if code != exitMismatch {
		t.Errorf("exit %d, want %d\n%s\n%s", code, exitMismatch, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("want header, 4 rows, summary and report line:\n%s", stdout.String())
	}
	for _, row := range lines[1:3] {
		if !strings.HasPrefix(row, "8 unlock-before-commit") || !strings.Contains(row, "skipped: MariaDB not found") ||
			!strings.Contains(row, "make deps") || strings.Contains(row, "!") || strings.Contains(row, "run unlock") {
			t.Errorf("row %q: want unlock-before-commit skipped with the install hint", row)
		}
	}
	for _, row := range lines[3:5] {
		if !strings.HasPrefix(row, "4 no-release") || !strings.HasSuffix(row, "yes") {
			t.Errorf("row %q: want no-release as expected", row)
		}
	}
	if want := "4 runs, 2 skipped: unlock-before-commit/broken, unlock-before-commit/fixed"; lines[5] != want {
		t.Errorf("summary %q, want %q", lines[5], want)
	}
	if strings.Count(stderr.String(), "skipped: MariaDB not found") != 2 {
		t.Errorf("progress should say both unlock-before-commit runs were skipped:\n%s", stderr.String())
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `<span class="skipped">skipped</span>: MariaDB not found`); n != 2 {
		t.Errorf("index.html shows %d skipped runs, want 2", n)
	}
	if !strings.Contains(string(page), `href="4-no-release-broken/lock.html"`) {
		t.Error("index.html lacks the runs that did run")
	}
}

// BenchmarkCatalogue is the wall time of the whole `check` run (target: under
// 60 s for the single-node catalogue). Run it with -benchtime 1x.
func BenchmarkCatalogue(b *testing.B) {
	for b.Loop() {
		if code := run(context.Background(), []string{"-out", b.TempDir()}, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
}

// TestWatch runs one pitfall with -watch through the command's code path,
// and once without: the live view draws each run's lanes, the overlap of
// the broken lock as it appears, and then the same table, with the same
// verdicts, as without -watch.
func TestWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// -watch must not change a verdict. A verdict the machine made unknown
	// (a stall, checker.Check.Late) in either run is the machine's, so
	// the pair is made again once for it.
	for try := 1; ; try++ {
		watchedDir, plainDir := t.TempDir(), t.TempDir()
		var watched, plain bytes.Buffer
		if code := run(ctx, []string{"-pitfall", "del-release", "-watch", "-out", watchedDir}, &watched, io.Discard); code != exitOK {
			t.Fatalf("-watch: exit %d\n%s", code, watched.String())
		}
		if code := run(ctx, []string{"-pitfall", "del-release", "-parallel", "1", "-out", plainDir}, &plain, io.Discard); code != exitOK {
			t.Fatalf("without -watch: exit %d\n%s", code, plain.String())
		}
		out := watched.String()
		for _, want := range []string{
			"del-release broken in pause-before-del · ended at ", "del-release fixed in pause-before-del · ended at ",
			"\nclient 0  ", "\nclient 3  ", "\nprobe     ", "\nfaults    ", "\noverlap   ",
			"fault: client pause (client 0), the scenario's crux", "OVERLAP: client ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("-watch's output lacks %q:\n%s", want, out)
			}
		}
		broken, _, _ := strings.Cut(out, "del-release fixed in pause-before-del")
		if !strings.Contains(broken, "\noverlap   ") || !strings.Contains(broken, string('!')) {
			t.Errorf("the broken run's lanes mark no overlap:\n%s", broken)
		}
		if _, fixed, _ := strings.Cut(out, "del-release fixed in pause-before-del · ended at "); strings.Contains(fixed, "OVERLAP") {
			t.Errorf("the fixed run's lanes show an overlap:\n%s", fixed)
		}
		got, want := verdictRows(t, out), verdictRows(t, plain.String())
		if slices.Equal(got, want) {
			return
		}
		stalls := append(lateVerdicts(t, watchedDir), lateVerdicts(t, plainDir)...)
		if len(stalls) == 0 || try == 2 {
			t.Fatalf("verdicts with -watch:\n%s\nwithout:\n%s\nmade unknown by the machine: %q",
				strings.Join(got, "\n"), strings.Join(want, "\n"), stalls)
		}
		t.Logf("try %d: the machine made a verdict unknown (%s); making both runs again", try, strings.Join(stalls, "; "))
	}
}

// lateVerdicts lists the verdicts that the machine made unknown
// (checker.Check.Late) in the runs saved under dir.
func lateVerdicts(t *testing.T, dir string) []string {
	t.Helper()
	runs, err := reports.LoadRuns(dir)
	if err != nil || len(runs) == 0 {
		t.Fatalf("no runs under %s (%v)", dir, err)
	}
	var late []string
	for _, r := range runs {
		if r.Result == nil {
			t.Fatalf("run %s: no %s", r.Name(), runner.ResultFile)
		}
		late = append(late, lateChecks(r.Name(), r.Result.Checks)...)
	}
	return late
}

// lateChecks names each of checks the machine made unknown
// (checker.Check.Late), after the run's name.
func lateChecks(run string, checks []checker.Check) []string {
	var late []string
	for _, c := range checks {
		if c.Late() {
			late = append(late, run+" "+c.Checker+": "+c.Detail)
		}
	}
	return late
}

// detectAndTime are the detect and time columns at the end of a row of
// check's table, before "as expected?".
var detectAndTime = regexp.MustCompile(`(?: \d+ ms| -) \S+( \S+)$`)

// verdictRows are the rows of check's table without their detect and time
// columns, which differ from run to run.
func verdictRows(t *testing.T, out string) []string {
	t.Helper()
	_, table, ok := strings.Cut(out, "pitfall        variant")
	if !ok {
		t.Fatalf("no table in\n%s", out)
	}
	var rows []string
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "5 del-release") {
			break
		}
		row := detectAndTime.ReplaceAllString(strings.Join(strings.Fields(line), " "), "$1")
		if row == strings.Join(strings.Fields(line), " ") {
			t.Fatalf("row %q: no detect and time columns found", line)
		}
		rows = append(rows, row)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows of del-release in the table, want 2:\n%s", len(rows), out)
	}
	return rows
}
