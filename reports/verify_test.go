package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/runner"
)

// goldenDir holds run folders copied from a real catalogue run (see its
// README.md).
const goldenDir = "testdata/report"

// goldenReport copies the golden runs into a fresh report folder and
// re-checks them, as `check verify` does, which also writes the pages.
func goldenReport(t *testing.T) (string, []Run, []Change) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "locklab-report")
	if err := os.CopyFS(dir, os.DirFS(goldenDir)); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, v.Runs, v.Changes
}

func TestVerifyReproducesGoldenVerdicts(t *testing.T) {
	dir, runs, changes := goldenReport(t)
	if len(changes) > 0 {
		t.Errorf("re-checking changed verdicts: %v", changes)
	}
	want := map[string]map[string]checker.Verdict{
		"3-no-ttl-broken":              {"lock": "ok", "resource": "ok", "liveness": "stuck", "handover": "ok"},
		"3-no-ttl-fixed":               {"lock": "ok", "resource": "ok", "liveness": "ok", "handover": "ok"},
		"4-no-release-broken":          {"lock": "ok", "resource": "ok", "liveness": "ok", "handover": "slow"},
		"5-del-release-broken":         {"lock": "illegal", "resource": "illegal", "liveness": "ok", "handover": "ok"},
		"11-redlock-clock-jump-broken": {"lock": "illegal", "resource": "illegal", "liveness": "ok", "handover": "ok"},
		"12-fenced-fixed":              {"lock": "illegal", "resource": "ok", "liveness": "ok", "handover": "ok"},
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(runs), len(want))
	}
	var order []string
	for _, r := range runs {
		folder := filepath.Base(r.ReportDir)
		order = append(order, folder)
		for c, v := range want[folder] {
			if r.Verdicts[c] != v {
				t.Errorf("%s: %s %s, want %s", folder, c, r.Verdicts[c], v)
			}
		}
		if !r.Pass {
			t.Errorf("%s: no longer as expected", folder)
		}
		// The kind told when the run was made survives the re-check.
		if folder == "5-del-release-broken" && r.Kinds["lock"] != checker.Own {
			t.Errorf("%s: the lock verdict lost its kind: %v", folder, r.Kinds)
		}
		for _, name := range []string{RunPageFile, runner.ResultFile, RunFile, runner.LockFile} {
			if _, err := os.Stat(filepath.Join(r.ReportDir, name)); err != nil {
				t.Errorf("%s: %v", folder, err)
			}
		}
		page, err := os.ReadFile(filepath.Join(r.ReportDir, RunPageFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{`<svg xmlns="http://www.w3.org/2000/svg" class="timeline"`, `href="../index.html"`, "<h1>"} {
			if !strings.Contains(string(page), s) {
				t.Errorf("%s/run.html lacks %q", folder, s)
			}
		}
		// The counterexample draws what freed the lock between the two
		// holds: of del-release, client 0's late release.
		if folder == "5-del-release-broken" {
			i := strings.Index(string(page), `class="step cause"`)
			if i < 0 || !strings.Contains(string(page)[i:], "client 0&#39;s late release") {
				t.Errorf("%s/run.html: the counterexample names no cause, or not client 0's late release", folder)
			}
		}
		if strings.Contains(string(page), "<script") {
			t.Errorf("%s/run.html has a script; the report must work without JavaScript", folder)
		}
	}
	// By pitfall ID: 3, 4, 5, 11, 12.
	if got := strings.Join(order, " "); got != "3-no-ttl-broken 3-no-ttl-fixed 4-no-release-broken 5-del-release-broken 11-redlock-clock-jump-broken 12-fenced-fixed" {
		t.Errorf("runs in order %s", got)
	}
	index, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`href="5-del-release-broken/run.html"`, "DESIGN.md", "seed article"} {
		has := strings.Contains(string(index), s)
		if wantIt := s[0] == 'h'; has != wantIt {
			t.Errorf("index.html contains %q: %v, want %v", s, has, wantIt)
		}
	}
	if code := VerifyCode(runs); code != VerifyViolation {
		t.Errorf("exit code %d, want %d for runs with violations", code, VerifyViolation)
	}
}

func TestVerifyOneRun(t *testing.T) {
	dir, _, _ := goldenReport(t)
	runDir := filepath.Join(dir, "3-no-ttl-fixed")
	if err := os.Remove(filepath.Join(runDir, RunPageFile)); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(runDir)
	runs, changes := v.Runs, v.Changes
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(changes) != 0 || VerifyCode(runs) != VerifyOK {
		t.Fatalf("runs %v, changes %v, code %d; want the one run, unchanged, ok", len(runs), changes, VerifyCode(runs))
	}
	if _, err := os.Stat(filepath.Join(runDir, RunPageFile)); err != nil {
		t.Error("the run's page was not rewritten:", err)
	}
}

// TestVerifyChangedVerdict: a result.json that says something the history
// does not is corrected, and the change reported.
func TestVerifyChangedVerdict(t *testing.T) {
	dir, _, _ := goldenReport(t)
	runDir := filepath.Join(dir, "3-no-ttl-fixed")
	b, err := os.ReadFile(filepath.Join(runDir, RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r["verdicts"].(map[string]any)["lock"] = "illegal"
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(runDir)
	runs, changes := v.Runs, v.Changes
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].String() != "no-ttl/fixed: lock was illegal, is now ok" {
		t.Errorf("changes %v", changes)
	}
	if runs[0].Verdicts["lock"] != checker.OK {
		t.Errorf("run.json keeps lock %s", runs[0].Verdicts["lock"])
	}
}

// oldHistory rewrites the history of the run in folder as one from before
// format versions: no header line.
func oldHistory(t *testing.T, folder string) {
	t.Helper()
	path := filepath.Join(folder, runner.HistoryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	if err := os.WriteFile(path, []byte(rest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyGoesOn: a report with one unreadable history has the others
// re-checked, and that one named, its verdicts left unchecked.
func TestVerifyGoesOn(t *testing.T) {
	dir, want, _ := goldenReport(t)
	oldHistory(t, filepath.Join(dir, "3-no-ttl-fixed"))
	// And an empty history in another run.
	if err := os.WriteFile(filepath.Join(dir, "3-no-ttl-broken", runner.HistoryFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Runs) != len(want) {
		t.Errorf("%d runs, want all %d of the report", len(v.Runs), len(want))
	}
	if len(v.Unread) != 2 {
		t.Fatalf("unread %q, want the two broken histories", v.Unread)
	}
	for _, err := range v.Unread {
		if line := err.Error(); !strings.Contains(line, "3-no-ttl-") || strings.Contains(line, "\n") {
			t.Errorf("unread: %q, want one line naming the run", line)
		}
	}
	if !errors.Is(v.Unread[1], history.ErrFormat) {
		t.Errorf("%v does not wrap %v", v.Unread[1], history.ErrFormat)
	}
	if got := (Verification{Runs: v.Runs[:1], Unread: v.Unread}).Code(); got == VerifyOK {
		t.Errorf("code %d for an unread history, want not ok", got)
	}
}

func TestVerifyRefuses(t *testing.T) {
	dir, _, _ := goldenReport(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && isRunFolder(filepath.Join(dir, e.Name())) {
			oldHistory(t, filepath.Join(dir, e.Name()))
		}
	}
	empty := t.TempDir()
	file := filepath.Join(empty, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir, want string
		is        error
	}{
		{dir, "history.jsonl: not a locklab history: its first line is not", history.ErrFormat},
		{filepath.Join(dir, "3-no-ttl-fixed"), "3-no-ttl-fixed/history.jsonl: not a locklab history", history.ErrFormat},
		{empty, "holds no run", nil},
		{file, "is not a folder", nil},
		{filepath.Join(empty, "missing"), "no such file", nil},
	} {
		_, err := Verify(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Verify(%s): %v, want one line with %q", tc.dir, err, tc.want)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("Verify(%s): %v does not wrap %v", tc.dir, err, tc.is)
		}
	}
}

func TestVerifyCode(t *testing.T) {
	for _, tc := range []struct {
		verdicts []map[string]checker.Verdict
		want     int
	}{
		{[]map[string]checker.Verdict{{"lock": "ok", "liveness": "ok"}}, VerifyOK},
		{[]map[string]checker.Verdict{{"lock": "ok"}, {"lock": "unknown"}}, VerifyUnknown},
		{[]map[string]checker.Verdict{{"lock": "unknown"}, {"handover": "slow"}}, VerifyViolation},
		{[]map[string]checker.Verdict{nil}, VerifyUnknown},
	} {
		var runs []Run
		for _, v := range tc.verdicts {
			runs = append(runs, Run{Verdicts: v})
		}
		if got := VerifyCode(runs); got != tc.want {
			t.Errorf("VerifyCode(%v) = %d, want %d", tc.verdicts, got, tc.want)
		}
	}
}

// withVersion rewrites the format line of the history of the run in folder
// to name version.
func withVersion(t *testing.T, folder string, version int) {
	t.Helper()
	path := filepath.Join(folder, runner.HistoryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	head := fmt.Sprintf(`{"format":%q,"version":%d}`, history.Format, version)
	if err := os.WriteFile(path, []byte(head+"\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyVersions: the golden runs are report folders users keep from
// version 1 of the history format, which still verify as they are; a
// version this locklab does not know is one line naming the file and the
// version.
func TestVerifyVersions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		want    string // the error; "" when it verifies
	}{
		{"version 1 as kept", 1, ""},
		{"unknown version", 3, "3-no-ttl-fixed/history.jsonl: not a locklab history: format version 3, this locklab reads versions 1 to 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "locklab-report")
			if err := os.CopyFS(dir, os.DirFS(goldenDir)); err != nil {
				t.Fatal(err)
			}
			run := filepath.Join(dir, "3-no-ttl-fixed")
			withVersion(t, run, tc.version)
			v, err := Verify(run)
			if tc.want == "" {
				if err != nil || len(v.Changes) > 0 || v.Code() != VerifyOK {
					t.Errorf("Verify: %v, changes %v, code %d; want the verdicts reproduced", err, v.Changes, v.Code())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || !errors.Is(err, history.ErrFormat) {
				t.Errorf("Verify: %v, want one line with %q wrapping ErrFormat", err, tc.want)
			}
		})
	}
}
