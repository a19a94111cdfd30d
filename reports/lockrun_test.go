package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/runner"
)

// withKinds sets the kind and its reason of checker c's check in res, as
// runner.Run does when a reference lock was run.
func withKinds(res *runner.Result, kinds map[string]checker.Kind) *runner.Result {
	for i, c := range res.Checks {
		if k, ok := kinds[c.Checker]; ok {
			res.Checks[i].Kind = k
			res.Checks[i].KindWhy = fmt.Sprintf("the reference lock %s <b>too</b>", map[checker.Kind]string{checker.Own: "passed", checker.Inherent: "failed"}[k])
		}
	}
	return res
}

// lockRuns builds, without Redis, the runs of a lock named redislock: one
// with no failure, one whose illegal lock verdict is inherent, one whose
// illegal verdicts are own and untold, one a checker could not judge, one
// spoiled and one skipped.
func lockRuns(t *testing.T, reportDir string) []Run {
	t.Helper()
	verdicts := func(lock, resource checker.Verdict) map[string]checker.Verdict {
		return map[string]checker.Verdict{checker.CheckLock: lock, checker.CheckResource: resource,
			checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK}
	}
	clean := newResult(t, reportDir, "contention", verdicts(checker.OK, checker.OK))
	inherent := withKinds(newResult(t, reportDir, "pause-holder", verdicts(checker.Illegal, checker.OK)),
		map[string]checker.Kind{checker.CheckLock: checker.Inherent})
	detect := 250 * time.Millisecond
	inherent.Detect = &detect
	own := withKinds(newResult(t, reportDir, "pause-before-del", verdicts(checker.Illegal, checker.Illegal)),
		map[string]checker.Kind{checker.CheckLock: checker.Own}) // resource: untold
	stalled := newResult(t, reportDir, "slow-work", verdicts(checker.OK, checker.Unknown))
	unknown := map[string]checker.Verdict{}
	for _, c := range checker.Checkers {
		unknown[c] = checker.Unknown
	}
	notRun := newResult(t, reportDir, "crash-holder", unknown)
	notRun.Spoiled = []string{"failpoint critical-section never fired"}
	return []Run{
		LockRun("redislock", clean),
		LockRun("redislock", inherent),
		LockRun("redislock", own),
		LockRun("redislock", stalled),
		LockRun("redislock", notRun),
		SkippedLockRun("redislock", "unlock-before-commit", 7, filepath.Join(reportDir, "redislock-unlock-before-commit"), "MariaDB not found: run `make deps`"),
	}
}

func TestLockRun(t *testing.T) {
	runs := lockRuns(t, t.TempDir())
	tests := []struct {
		scenario string
		pass     bool
		kinds    map[string]checker.Kind
		own      []string
	}{
		{"contention", true, nil, nil},
		{"pause-holder", true, map[string]checker.Kind{checker.CheckLock: checker.Inherent}, nil},
		{"pause-before-del", false, map[string]checker.Kind{checker.CheckLock: checker.Own}, []string{"lock illegal", "resource illegal (untold)"}},
		{"slow-work", false, nil, nil},
		{"crash-holder", false, nil, nil},
		{"unlock-before-commit", false, nil, nil},
	}
	for i, tt := range tests {
		r := runs[i]
		if r.Lock != "redislock" || r.Pitfall != "" || r.Scenario != tt.scenario || r.Expected != nil {
			t.Errorf("run %d = %+v", i, r)
		}
		if r.Pass != tt.pass {
			t.Errorf("%s: pass = %v, want %v", r.Name(), r.Pass, tt.pass)
		}
		if fmt.Sprint(r.Kinds) != fmt.Sprint(tt.kinds) {
			t.Errorf("%s: kinds = %v, want %v", r.Name(), r.Kinds, tt.kinds)
		}
		if got := r.ownFailures(); !slices.Equal(got, tt.own) {
			t.Errorf("%s: own failures = %q, want %q", r.Name(), got, tt.own)
		}
		if r.LockEntry.Name != "redislock" {
			t.Errorf("%s: no registry entry", r.Name())
		}
	}
	if r := LockRun("my-own-lock", runs[0].Result); r.LockEntry.Name != "" || !r.Pass {
		t.Errorf("an attendee's lock = %+v", r)
	}

	// A kind the harness could not tell keeps its reason, and fails the run.
	res := runs[1].Result
	res.Checks[0].Kind, res.Checks[0].KindWhy = "", "the reference lock could not run"
	r := LockRun("redislock", res)
	if r.Kinds != nil || r.KindWhy[checker.CheckLock] != "the reference lock could not run" || r.Pass ||
		r.verdictText(checker.CheckLock) != "illegal (untold)" {
		t.Errorf("untold run = %+v, cell %q", r, r.verdictText(checker.CheckLock))
	}
}

func TestLockRunTable(t *testing.T) {
	dir := t.TempDir()
	cat := testRuns(t, dir)[:1]
	runs := append(cat, lockRuns(t, dir)...)
	var buf bytes.Buffer
	if err := WriteTable(&buf, runs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// The catalogue's header and row, a blank line, the lock's title,
	// header and 6 rows, and the summary.
	if len(lines) != 2+1+2+6+1 {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	if lines[2] != "" || lines[3] != "lock redislock" || !strings.HasPrefix(lines[4], "scenario") ||
		!strings.HasSuffix(lines[4], "own failures?") || strings.Contains(lines[4], "as expected?") {
		t.Errorf("the lock's table does not start with its title and header:\n%s", out)
	}
	rows := lines[5:11]
	for i, want := range []struct{ contains, suffix string }{
		{" ok ", "none"},
		{" illegal (inherent) ", "none"},
		{" illegal (own) ", "lock illegal, resource illegal (untold)"},
		{" unknown ", "unknown: resource"},
		{" unknown ", "spoiled: failpoint critical-section never fired"},
		{" - ", "skipped: MariaDB not found: run `make deps`"},
	} {
		if !strings.Contains(rows[i], want.contains) || !strings.HasSuffix(rows[i], want.suffix) || strings.Contains(rows[i], "!") {
			t.Errorf("row %q: want %q and ending %q", rows[i], want.contains, want.suffix)
		}
	}
	if !strings.Contains(rows[1], "250 ms") {
		t.Errorf("row %q lacks its detect time", rows[1])
	}
	want := "7 runs, 1 with own failures: redislock/pause-before-del; 1 with unknown verdicts: redislock/slow-work; 1 spoiled: redislock/crash-holder; 1 skipped: redislock/unlock-before-commit"
	if got := lines[len(lines)-1]; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}

	buf.Reset()
	if err := WriteTable(&buf, lockRuns(t, dir)[:2]); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "lock redislock\n") || !strings.HasSuffix(buf.String(), "\n2 runs, no own failures\n") {
		t.Errorf("two good lock runs:\n%s", buf.String())
	}
}

// TestKindsInCatalogueTable: a catalogue case shows the kind of a failing
// verdict too, next to the "!" of a verdict it did not expect.
func TestKindsInCatalogueTable(t *testing.T) {
	runs := testRuns(t, t.TempDir())
	withKinds(runs[0].Result, map[string]checker.Kind{checker.CheckLiveness: checker.Own})
	withKinds(runs[1].Result, map[string]checker.Kind{checker.CheckLiveness: checker.Inherent})
	runs[0] = NewRun(runs[0].Entry, runs[0].Entry.Cases()[0], runs[0].Result)
	runs[1] = NewRun(runs[1].Entry, runs[1].Entry.Cases()[1], runs[1].Result)
	var buf bytes.Buffer
	if err := WriteTable(&buf, runs[:2]); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[1], " stuck (own) ") || !strings.HasSuffix(lines[1], "yes") {
		t.Errorf("broken row = %q", lines[1])
	}
	if !strings.Contains(lines[2], "!stuck (inherent)") {
		t.Errorf("fixed row = %q", lines[2])
	}
}

func TestLockRunJSON(t *testing.T) {
	dir := t.TempDir()
	runs := append(testRuns(t, dir)[:1], lockRuns(t, dir)...)
	withKinds(runs[0].Result, map[string]checker.Kind{checker.CheckLiveness: checker.Own})
	runs[0] = NewRun(runs[0].Entry, runs[0].Entry.Cases()[0], runs[0].Result)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, runs); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	tests := []struct {
		run   int
		keys  []string
		kinds map[string]any
	}{
		{0, []string{"detect_ms", "duration_ms", "expected", "kind_why", "kinds", "pass", "pitfall", "report_dir", "scenario", "seed", "variant", "verdicts"},
			map[string]any{"liveness": "own"}},
		{1, []string{"detect_ms", "duration_ms", "lock", "pass", "report_dir", "scenario", "seed", "verdicts"}, nil},
		{3, []string{"detect_ms", "duration_ms", "kind_why", "kinds", "lock", "pass", "report_dir", "scenario", "seed", "verdicts"},
			map[string]any{"lock": "own"}},
		{6, []string{"detect_ms", "duration_ms", "lock", "pass", "report_dir", "scenario", "seed", "skipped", "verdicts"}, nil},
	}
	for _, tt := range tests {
		m := got[tt.run]
		if k := keys(m); !slices.Equal(k, tt.keys) {
			t.Errorf("run %d keys = %v, want %v", tt.run, k, tt.keys)
		}
		kinds, _ := m["kinds"].(map[string]any)
		if fmt.Sprint(kinds) != fmt.Sprint(tt.kinds) {
			t.Errorf("run %d kinds = %v, want %v", tt.run, m["kinds"], tt.kinds)
		}
	}
	if why, _ := got[3]["kind_why"].(map[string]any); why["lock"] != "the reference lock passed <b>too</b>" {
		t.Errorf("run 3 kind_why = %v", got[3]["kind_why"])
	}
	if got[3]["lock"] != "redislock" || got[3]["pass"] != false || got[2]["pass"] != true {
		t.Errorf("runs = %v", got)
	}
}

func TestLockRunIndex(t *testing.T) {
	dir := t.TempDir()
	runs := append(testRuns(t, dir)[:1], lockRuns(t, dir)...)
	if err := WriteIndex(dir, runs); err != nil {
		t.Fatal(err)
	}
	page := readIndex(t, dir)
	for _, want := range []string{
		`<section class="lock" id="lock-redislock">`,
		"<h2>Lock redislock <small class=\"meta\">(library)</small></h2>",
		"github.com/bsm/redislock",
		`<th>own failures?</th>`,
		`<td><a href="#lock-redislock-pause-holder">pause-holder</a></td>`,
		`<td>single</td>`,
		`<span class="kind" title="the reference lock failed &lt;b&gt;too&lt;/b&gt;">inherent</span>`,
		`<span class="kind" title="the reference lock passed &lt;b&gt;too&lt;/b&gt;">own</span>`,
		`<span class="no">own failures</span><br>lock illegal<br>resource illegal (untold)`,
		`<span class="yes">no own failures</span>`,
		`<span class="no">unknown verdicts</span><br>unknown: resource`,
		`<span class="skipped">skipped</span><br>MariaDB not found`,
		`<div class="variant" id="lock-redislock-pause-before-del">`,
		`<b>own</b>: the reference lock passed &lt;b&gt;too&lt;/b&gt;`,
		// The catalogue's matrix is still there for its case.
		`<h2>Matrix</h2>`, `id="pitfall-setnx-expire"`,
		"7 runs, 1 with own failures: redislock/pause-before-del",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	// One matrix row per scenario of the lock.
	if n := strings.Count(page, `<td><a href="#lock-redislock-`); n != 6 {
		t.Errorf("the lock's matrix has %d rows, want 6", n)
	}

	// A folder of lock runs only has no catalogue matrix.
	only := t.TempDir()
	if err := WriteIndex(only, lockRuns(t, only)); err != nil {
		t.Fatal(err)
	}
	if page := readIndex(t, only); strings.Contains(page, "<h2>Matrix</h2>") || !strings.Contains(page, `id="lock-redislock"`) {
		t.Error("a report of lock runs only shows the catalogue's matrix, or not the lock's")
	}
}

// TestLoadLockRuns: lock runs come back from run.json with their kinds and
// registry entry, after the catalogue's cases, by lock in registry order and
// then by scenario; an attendee's lock the registry lacks comes last.
func TestLoadLockRuns(t *testing.T) {
	dir := t.TempDir()
	save := func(lock, scenario string, kinds map[string]checker.Kind) {
		t.Helper()
		res := withKinds(&runner.Result{Scenario: scenario, Seed: 3, Duration: time.Second, Dir: filepath.Join(dir, lock+"-"+scenario),
			Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.Illegal, checker.CheckResource: checker.OK,
				checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK},
			Checks: []checker.Check{{Checker: checker.CheckLock, Verdict: checker.Illegal}}}, kinds)
		if err := SaveRun(LockRun(lock, res)); err != nil {
			t.Fatal(err)
		}
	}
	save("my-lock", "contention", map[string]checker.Kind{checker.CheckLock: checker.Own})
	save("redsync", "slow-work", map[string]checker.Kind{checker.CheckLock: checker.Inherent})
	save("redsync", "crash-holder", map[string]checker.Kind{checker.CheckLock: checker.Inherent})
	save("redislock", "slow-work", map[string]checker.Kind{checker.CheckLock: checker.Own})
	saveFixture(t, dir, "5-del-release-broken", "del-release", 0, checker.Illegal)

	runs, err := LoadRuns(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Name())
	}
	want := []string{"del-release/broken", "redsync/crash-holder", "redsync/slow-work", "redislock/slow-work", "my-lock/contention"}
	if !slices.Equal(got, want) {
		t.Fatalf("loaded %v, want %v", got, want)
	}
	if r := runs[1]; r.Kinds[checker.CheckLock] != checker.Inherent || !r.Pass || r.LockEntry.Name != "redsync" ||
		r.ReportDir != filepath.Join(dir, "redsync-crash-holder") {
		t.Errorf("run 1 = %+v", r)
	}
	if r := runs[4]; r.Kinds[checker.CheckLock] != checker.Own || r.Pass || r.LockEntry.Name != "" {
		t.Errorf("run 4 = %+v", r)
	}

	// A run.json naming both a pitfall and a lock, or neither, is no run.
	for _, body := range []string{`{"pitfall":"del-release","variant":"broken","lock":"redsync","scenario":"x"}`, `{"scenario":"x"}`} {
		bad := filepath.Join(dir, "bad")
		if err := os.MkdirAll(bad, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, RunFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		runs, err := LoadRuns(dir)
		if err == nil || !strings.Contains(err.Error(), "not a run") || len(runs) != len(want) {
			t.Errorf("%s: %d runs, err %v", body, len(runs), err)
		}
	}
}
