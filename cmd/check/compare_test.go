package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locklab/locklab/compare"
)

// TestCompareUsage: bad input to check compare is one line and exit 2,
// before any run.
func TestCompareUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-locks", "no-such-lock"},
		{"-classes", "paused,no-such-class"},
		{"-parallel", "0"},
		{"-runs", "0"},
		{"-backend", "cloud"},
		{"extra"},
		{"-service", "redis"},
		{"-lock", "exec:/bin/sh lock.sh"},
		{"-lock", "redlock", "-service", "mariadb"},
		{"-lock", "token", "-service", "nowhere"},
	} {
		var stderr bytes.Buffer
		out := t.TempDir()
		code := run(context.Background(), append([]string{"compare", "-out", out}, args...), io.Discard, &stderr)
		if code != exitUsage || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("compare %q: exit %d, stderr %q; want exit 2 and one line", args, code, stderr.String())
		}
	}
}

// TestCompare runs two rows by two classes, two runs a cell: every cell
// that ran links a run page that exists, lists both runs with their own
// pages and verdicts, every "—" cell says why, and compare.json parses to
// what stdout printed.
func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (make deps)")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"compare", "-out", out, "-json", "-runs", "2", "-locks", "in-process,token-watchdog", "-classes", "paused,failover"}
	if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var printed, saved compare.Table
	if err := json.Unmarshal(stdout.Bytes(), &printed); err != nil {
		t.Fatalf("stdout: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, compare.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatalf("%s: %v", compare.JSONFile, err)
	}
	if len(saved.Rows) != 2 || len(saved.Classes) != 2 || len(printed.Rows) != 2 || saved.Runs != 2 {
		t.Fatalf("%d rows and %d classes saved, %d rows printed; and %d runs a cell; want 2, 2, 2, 2", len(saved.Rows), len(saved.Classes), len(printed.Rows), saved.Runs)
	}
	page, err := os.ReadFile(filepath.Join(out, compare.PageFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "%!") {
		t.Errorf("%s has a formatting error", compare.PageFile)
	}
	ran := 0
	for _, r := range saved.Rows {
		for _, c := range r.Cells {
			checkCell(t, out, string(page), r.Lock, c)
			if c.Text != compare.None {
				ran++
			}
		}
	}
	// in-process has no lock node to fail over; the other three cells ran.
	if ran != 3 {
		t.Errorf("%d cells ran, want 3", ran)
	}
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil || !strings.Contains(string(index), `href="compare.html"`) {
		t.Errorf("index.html does not link the comparison (%v)", err)
	}
}

// checkCell checks one cell: runs whose pages exist and are linked from
// the cell, or "—" with a reason.
func checkCell(t *testing.T, out, page, lock string, c compare.Cell) {
	t.Helper()
	if c.Text == compare.None {
		if c.Why == "" || c.Page != "" {
			t.Errorf("%s × %s: — with why %q and page %q; want a reason and no page", lock, c.Class, c.Why, c.Page)
		}
		return
	}
	if c.Scenario == "" || c.Verdict == "" || c.Page == "" {
		t.Errorf("%s × %s: %+v; want a scenario, a verdict and a page", lock, c.Class, c)
		return
	}
	if len(c.Runs) != 2 || c.Runs[0].Seed == c.Runs[1].Seed {
		t.Errorf("%s × %s: runs %+v; want two, with seeds of their own", lock, c.Class, c.Runs)
	}
	pages := []string{c.Page}
	for _, o := range c.Others {
		pages = append(pages, o.Page)
	}
	for _, r := range c.Runs {
		if r.Page == "" || r.Text == "" || (len(r.Verdicts) == 0 && r.Verdict != "unknown") {
			t.Errorf("%s × %s run %d: %+v; want a page and its verdicts", lock, c.Class, r.Run, r)
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(r.Page))); err != nil {
			t.Errorf("%s × %s run %d: %v", lock, c.Class, r.Run, err)
		}
		pages = append(pages, r.Page)
	}
	for _, p := range pages {
		if !strings.Contains(page, `href="`+p+`"`) {
			t.Errorf("%s × %s: %s does not link %s", lock, c.Class, compare.PageFile, p)
		}
	}
}

// TestCompareOwnProgram: a lock program given with -lock exec: and
// -service has a row of its own, marked as the user's, first in its
// family, its cell made of its own runs and linked to their pages.
func TestCompareOwnProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real servers: the full tier (make test)")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (make deps)")
	}
	if exec.Command("/usr/bin/python3", "-c", "import redis").Run() != nil {
		t.Skip("python3-redis is not installed for /usr/bin/python3 (make deps)")
	}
	program, err := filepath.Abs(filepath.Join("..", "..", "programs", "redispy.py"))
	if err != nil {
		t.Fatal(err)
	}
	lock := "exec:/usr/bin/python3 " + program + " --renew"
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"compare", "-out", out, "-json", "-runs", "1", "-locks", "token-watchdog", "-classes", "paused",
		"-lock", lock, "-service", "redis"}
	if code := run(context.Background(), args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var saved compare.Table
	if err := json.Unmarshal(stdout.Bytes(), &saved); err != nil {
		t.Fatal(err)
	}
	if len(saved.Rows) != 2 || saved.Rows[0].Lock != lock || !saved.Rows[0].Own || saved.Rows[1].Lock != "token-watchdog" {
		t.Fatalf("rows %+v; want the program's, marked own, then token-watchdog", saved.Rows)
	}
	c := saved.Rows[0].Cells[0]
	if c.Scenario == "" || len(c.Runs) != 1 || c.Runs[0].Page == "" || !strings.HasPrefix(c.Page, saved.Rows[0].Name) {
		t.Errorf("the program's cell %+v; want one run of its own, under %s", c, saved.Rows[0].Name)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(c.Page))); err != nil {
		t.Error(err)
	}
}
