package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/runner"
)

// entry is the catalogue entry named name.
func entry(t *testing.T, name string) pitfalls.Pitfall {
	t.Helper()
	found, err := pitfalls.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return found[0]
}

// testRuns builds, without Redis, the runs of setnx-expire (pitfall 1): a
// broken run that was caught as expected, and a fixed run whose liveness
// checker wrongly says stuck. A third run of del-release has its lock
// verdict wrong, to test the "NO: lock: got ok, expected illegal" line.
func testRuns(t *testing.T, reportDir string) []Run {
	t.Helper()
	first, del := entry(t, "setnx-expire"), entry(t, "del-release")

	detect := 420 * time.Millisecond
	at := detect
	broken := newResult(t, reportDir, first.Scenario, map[string]checker.Verdict{
		checker.CheckLock: checker.OK, checker.CheckResource: checker.OK,
		checker.CheckLiveness: checker.Stuck, checker.CheckHandover: checker.OK,
	})
	broken.Detect = &detect
	broken.Checks[2].At = &at
	broken.Checks[2].Detail = `no lock within 1s; key "lock" has PTTL -1 <script>alert(1)</script>`
	broken.Faults = []string{"failpoint: crash client 0 at after-setnx"}

	fixed := newResult(t, reportDir, first.Scenario, map[string]checker.Verdict{
		checker.CheckLock: checker.OK, checker.CheckResource: checker.OK,
		checker.CheckLiveness: checker.Stuck, checker.CheckHandover: checker.OK,
	})

	missed := newResult(t, reportDir, del.Scenario, map[string]checker.Verdict{
		checker.CheckLock: checker.OK, checker.CheckResource: checker.OK,
		checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK,
	})

	return []Run{
		NewRun(first, first.Cases()[0], broken),
		NewRun(first, first.Cases()[1], fixed),
		NewRun(del, del.Cases()[0], missed),
	}
}

// newResult makes a result as runner.Run would, with its files in a fresh
// folder under reportDir.
func newResult(t *testing.T, reportDir, scenario string, verdicts map[string]checker.Verdict) *runner.Result {
	t.Helper()
	dir, err := os.MkdirTemp(reportDir, "run-")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{runner.HistoryFile, runner.ResultFile, runner.LockFile, runner.ResourceFile} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := &runner.Result{Scenario: scenario, Seed: 7, Verdicts: verdicts,
		Duration: 2345 * time.Millisecond, Dir: dir,
		Stats: checker.Stats{Acquires: 40, Refused: 12, Sections: 40,
			Before: checker.Span{From: 0, To: time.Second, Sections: 30, PerSec: 30},
			During: checker.Span{From: time.Second, To: 1500 * time.Millisecond, Sections: 5, PerSec: 10},
			After:  checker.Span{From: 1500 * time.Millisecond, To: 2 * time.Second, Sections: 5, PerSec: 10}}}
	for _, c := range checker.Checkers {
		res.Checks = append(res.Checks, checker.Check{Checker: c, Verdict: verdicts[c], Detail: c + " detail"})
	}
	return res
}

func TestWriteTable(t *testing.T) {
	runs := testRuns(t, t.TempDir())
	var buf bytes.Buffer
	if err := WriteTable(&buf, runs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(runs)+2 {
		t.Fatalf("got %d lines, want header, %d rows and a summary:\n%s", len(lines), len(runs), out)
	}
	for _, col := range []string{"pitfall", "variant", "scenario", "lock", "resource", "liveness", "handover", "detect", "time", "as expected?"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header %q lacks %q", lines[0], col)
		}
	}

	// The broken setnx-expire run: stuck as expected, caught after 420 ms.
	if row := lines[1]; !strings.Contains(row, "setnx-expire") || !strings.Contains(row, " stuck ") ||
		!strings.Contains(row, "420 ms") || !strings.Contains(row, "2.345s") || !strings.HasSuffix(row, "yes") {
		t.Errorf("broken row = %q", row)
	}
	// The fixed run should pass liveness, so its stuck verdict is flagged.
	if row := lines[2]; !strings.Contains(row, "!stuck") || !strings.Contains(row, "NO: liveness: got stuck, expected ok") {
		t.Errorf("fixed row = %q", row)
	}
	if row := lines[3]; !strings.Contains(row, "!ok") || !strings.HasSuffix(row, "NO: lock: got ok, expected illegal") {
		t.Errorf("del-release row = %q", row)
	}
	want := "3 runs, 2 NOT as expected: setnx-expire/fixed, del-release/broken"
	if got := lines[len(lines)-1]; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}

	buf.Reset()
	if err := WriteTable(&buf, runs[:1]); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "\n1 run, 1 as expected\n") {
		t.Errorf("summary of one good run:\n%s", buf.String())
	}
}

func TestWriteJSON(t *testing.T) {
	runs := testRuns(t, t.TempDir())
	runs[1].DetectMS = nil
	var buf bytes.Buffer
	if err := WriteJSON(&buf, runs); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, buf.String())
	}
	if len(got) != len(runs) {
		t.Fatalf("got %d runs, want %d", len(got), len(runs))
	}
	wantKeys := []string{"detect_ms", "duration_ms", "expected", "pass", "pitfall", "report_dir", "scenario", "seed", "variant", "verdicts"}
	for i, m := range got {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("run %d keys = %v, want %v", i, keys, wantKeys)
		}
	}
	if got[0]["detect_ms"] != 420.0 || got[0]["pass"] != true || got[0]["variant"] != "broken" {
		t.Errorf("run 0 = %v", got[0])
	}
	if v, ok := got[1]["detect_ms"]; !ok || v != nil {
		t.Errorf("run 1 detect_ms = %v, want null", v)
	}
	if verdicts, _ := got[2]["verdicts"].(map[string]any); verdicts["lock"] != "ok" {
		t.Errorf("run 2 verdicts = %v", got[2]["verdicts"])
	}

	buf.Reset()
	if err := WriteJSON(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(buf.String()) != "[]" {
		t.Errorf("no runs = %q, want []", buf.String())
	}
}

func TestWriteIndex(t *testing.T) {
	dir := t.TempDir()
	runs := testRuns(t, dir)
	if err := WriteIndex(dir, runs); err != nil {
		t.Fatal(err)
	}
	page := readIndex(t, dir)

	for _, want := range []string{
		"<title>locklab report</title>",
		"3 runs, 2 NOT as expected",
		runs[0].Entry.Name, runs[0].Entry.Title, runs[2].Entry.Name,
		"what goes wrong", "the fix",
		"failpoint: crash client 0 at after-setnx",
		"420 ms",
	} {
		if !strings.Contains(strings.ToLower(page), strings.ToLower(want)) {
			t.Errorf("index.html lacks %q", want)
		}
	}

	// Links are relative to the report folder, so it can be moved whole.
	for _, r := range runs {
		rel := filepath.Base(r.ReportDir)
		for _, name := range []string{runner.LockFile, runner.ResourceFile, runner.HistoryFile, runner.ResultFile} {
			if href := `href="` + rel + "/" + name + `"`; !strings.Contains(page, href) {
				t.Errorf("index.html lacks %s", href)
			}
		}
	}
	if strings.Contains(page, dir) {
		t.Error("index.html contains the absolute report folder; links should be relative")
	}

	if strings.Contains(page, "<script>") {
		t.Error("a check's detail was not escaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the escaped detail is missing")
	}
}

func TestRunLinks(t *testing.T) {
	if got := runLinks("report", ""); got != nil {
		t.Errorf("no run folder: got links %v", got)
	}
	// A run folder without files gets no dead links.
	if got := runLinks(t.TempDir(), t.TempDir()); len(got) != 0 {
		t.Errorf("empty run folder: got links %v", got)
	}
	if got := relativeTo("out", "out/runs/a"); got != "runs/a" {
		t.Errorf("relativeTo = %q, want runs/a", got)
	}
	if got := relativeTo("out/report", "out/runs/a"); got != "../runs/a" {
		t.Errorf("relativeTo = %q, want ../runs/a", got)
	}
}

// oddRuns are a run that was spoiled and one that was skipped, as
// setnx-expire would give them.
func oddRuns(t *testing.T, reportDir string) []Run {
	t.Helper()
	first := entry(t, "setnx-expire")
	unknown := map[string]checker.Verdict{}
	for _, c := range checker.Checkers {
		unknown[c] = checker.Unknown
	}
	res := newResult(t, reportDir, first.Scenario, unknown)
	res.Spoiled = []string{"failpoint after-setnx never fired"}
	skippedDir := filepath.Join(reportDir, "skipped-run")
	return []Run{
		NewRun(first, first.Cases()[0], res),
		SkippedRun(first, first.Cases()[1], 7, skippedDir, "MariaDB not found: run `make deps`"),
	}
}

// TestOddRunsInTable: a run that was spoiled or skipped says so in its
// last column and in the summary, and is not a pass.
func TestOddRunsInTable(t *testing.T) {
	runs := oddRuns(t, t.TempDir())
	for _, r := range runs {
		if r.Pass {
			t.Errorf("%s/%s passes", r.Pitfall, r.Variant)
		}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want header, 2 rows and a summary:\n%s", buf.String())
	}
	if row := lines[1]; !strings.HasSuffix(row, "spoiled: failpoint after-setnx never fired") ||
		!strings.Contains(row, " unknown ") || strings.Contains(row, "!") {
		t.Errorf("spoiled row = %q", row)
	}
	if row := lines[2]; !strings.HasSuffix(row, "skipped: MariaDB not found: run `make deps`") ||
		strings.Contains(row, "!") || strings.Count(row, " - ") < 5 {
		t.Errorf("skipped row = %q", row)
	}
	want := "2 runs, 1 spoiled: setnx-expire/broken; 1 skipped: setnx-expire/fixed"
	if got := lines[3]; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, runs); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got[0]["spoiled"] == nil || got[1]["skipped"] != "MariaDB not found: run `make deps`" || got[1]["pass"] != false {
		t.Errorf("JSON = %v", got)
	}
}

// TestOddRunsInIndex: the page shows skipped and spoiled runs for what
// they are.
func TestOddRunsInIndex(t *testing.T) {
	dir := t.TempDir()
	if err := WriteIndex(dir, oddRuns(t, dir)); err != nil {
		t.Fatal(err)
	}
	page := readIndex(t, dir)
	for _, want := range []string{
		`<span class="skipped">skipped</span>: MariaDB not found: run `,
		"The run could not start: MariaDB not found",
		`<span class="no">spoiled</span><br>failpoint after-setnx never fired`,
		"1 spoiled: setnx-expire/broken; 1 skipped: setnx-expire/fixed",
		`class="summary fail"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if strings.Contains(page, "No detailed result was recorded") {
		t.Error("a skipped run is said to have no detailed result, as if it had run")
	}
}

// saveFixture saves a run of case c of the named pitfall in dir/folder with a
// result.json, as check would leave it.
func saveFixture(t *testing.T, dir, folder, pitfall string, c int, lock checker.Verdict) Run {
	t.Helper()
	found, err := pitfalls.Lookup(pitfall)
	if err != nil {
		t.Fatal(err)
	}
	p := found[0]
	cs := p.Cases()[c]
	res := &runner.Result{Scenario: cs.Scenario, Seed: 3, Duration: time.Second,
		Verdicts: map[string]checker.Verdict{checker.CheckLock: lock, checker.CheckResource: checker.OK,
			checker.CheckLiveness: checker.OK, checker.CheckHandover: checker.OK},
		Faults: []string{"fault of " + folder}, Dir: filepath.Join(dir, folder)}
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res.Dir, runner.ResultFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRun(p, cs, res)
	if err := SaveRun(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLoadRuns: every run folder comes back, with its catalogue entry and
// result, in catalogue order, the newer of two folders of one case winning;
// folders without run.json are not runs, and a broken run.json is named in
// the error without costing the others.
func TestLoadRuns(t *testing.T) {
	dir := t.TempDir()
	// Saved out of catalogue order: del-release (5) before setnx-expire (1),
	// the fixed variant before the broken one.
	saveFixture(t, dir, "5-del-release-broken", "del-release", 0, checker.Illegal)
	saveFixture(t, dir, "1-setnx-expire-fixed", "setnx-expire", 1, checker.OK)
	stale := saveFixture(t, dir, "old-name-setnx-expire-broken", "setnx-expire", 0, checker.Illegal)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(stale.ReportDir, RunFile), old, old); err != nil {
		t.Fatal(err)
	}
	saveFixture(t, dir, "1-setnx-expire-broken", "setnx-expire", 0, checker.OK)
	first := entry(t, "setnx-expire")
	if err := SaveRun(SkippedRun(first, first.Cases()[0], 1, filepath.Join(dir, "zz-unknown"), "gone")); err != nil {
		t.Fatal(err)
	}
	// A pitfall the catalogue no longer has still shows, last.
	b, err := os.ReadFile(filepath.Join(dir, "zz-unknown", RunFile))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"setnx-expire"`), []byte(`"retired-pitfall"`), 1)
	if err := os.WriteFile(filepath.Join(dir, "zz-unknown", RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Not runs: a folder without run.json, a file, a broken run.json.
	if err := os.MkdirAll(filepath.Join(dir, "interrupted"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken", RunFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}

	runs, err := LoadRuns(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("broken", RunFile)) || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming broken/run.json", err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, filepath.Base(r.ReportDir))
	}
	want := []string{"1-setnx-expire-broken", "1-setnx-expire-fixed", "5-del-release-broken", "zz-unknown"}
	if !slices.Equal(got, want) {
		t.Fatalf("runs from %v, want %v", got, want)
	}
	if r := runs[0]; r.Entry.ID != "1" || r.Result == nil || r.Result.Faults[0] != "fault of 1-setnx-expire-broken" ||
		r.Verdicts[checker.CheckLock] != checker.OK || r.Pass {
		t.Errorf("run 0 = %+v", r)
	}
	if r := runs[2]; r.Entry.Name != "del-release" || !r.Pass || r.Result == nil {
		t.Errorf("run 2 = %+v", r)
	}
	if r := runs[3]; r.Pitfall != "retired-pitfall" || r.Entry.Name != "" || r.Skipped != "gone" || r.Result != nil {
		t.Errorf("run 3 = %+v", r)
	}

	// The index of what was loaded links every run's files.
	if err := WriteIndex(dir, runs); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, href := range []string{"1-setnx-expire-broken/result.json", "5-del-release-broken/result.json"} {
		if !strings.Contains(string(page), `href="`+href+`"`) {
			t.Errorf("index.html lacks a link to %s", href)
		}
	}

	if runs, err := LoadRuns(filepath.Join(dir, "missing")); runs != nil || err != nil {
		t.Errorf("missing folder: %v, %v", runs, err)
	}
}

// readIndex reads the index page in dir.
func readIndex(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLockRunsKeepTheirOwnStory: in a report of one lock through several
// scenarios, each run shows the faults its own history recorded, not the
// first run's.
func TestLockRunsKeepTheirOwnStory(t *testing.T) {
	dir := t.TempDir()
	var runs []Run
	var stories []runStory
	for _, scenario := range []string{"contention", "pause-holder", "slow-work"} {
		runs = append(runs, LockRun("token", &runner.Result{Scenario: scenario, Seed: 1, Duration: time.Second,
			Dir: filepath.Join(dir, "token-"+scenario)}))
		stories = append(stories, runStory{schedule: []string{"faults of " + scenario}})
	}
	p := newPage(dir, runs, stories, time.Now())
	if len(p.Locks) != 1 || len(p.Locks[0].Runs) != len(runs) {
		t.Fatalf("locks %+v, want one lock with %d runs", p.Locks, len(runs))
	}
	for i, v := range p.Locks[0].Runs {
		if want := []string{"faults of " + runs[i].Scenario}; !slices.Equal(v.Faults, want) {
			t.Errorf("run %s shows faults %q, want %q", runs[i].Scenario, v.Faults, want)
		}
	}
}

// TestIndexGroupsByFamily: the matrix and the pitfall sections are headed
// once per family of locks, in the catalogue's order.
func TestIndexGroupsByFamily(t *testing.T) {
	dir := t.TempDir()
	var runs []Run
	for _, name := range []string{"in-process", "del-release", "no-ttl", "row-no-expiry"} {
		p := entry(t, name)
		c := p.Cases()[0]
		runs = append(runs, NewRun(p, c, newResult(t, dir, c.Scenario, c.Expected)))
	}
	if err := WriteIndex(dir, runs); err != nil {
		t.Fatal(err)
	}
	page := readIndex(t, dir)
	for _, family := range []pitfalls.Family{pitfalls.InProcess, pitfalls.Redis, pitfalls.Database} {
		row := `<tr class="family"><th colspan="` + strconv.Itoa(len(checker.Checkers)+6) + `">` + string(family) + ` locks</th></tr>`
		if n := strings.Count(page, row); n != 1 {
			t.Errorf("the matrix heads the %s family %d times, want once", family, n)
		}
		if n := strings.Count(page, `<h2 class="family">`+string(family)+" locks</h2>"); n != 1 {
			t.Errorf("the sections head the %s family %d times, want once", family, n)
		}
	}
	if i, j := strings.Index(page, `<h2 class="family">Redis`), strings.Index(page, `<h2 class="family">database`); i < 0 || j < i {
		t.Error("the database family comes before the Redis family")
	}
}
