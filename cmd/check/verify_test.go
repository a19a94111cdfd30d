package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden copies the golden report of package reports (runs from a real
// catalogue run) into a fresh folder.
func golden(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "locklab-report")
	if err := os.CopyFS(dir, os.DirFS("../../reports/testdata/report")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestVerify(t *testing.T) {
	dir := golden(t)
	// A history from before format versions, in a report of its own.
	old := golden(t)
	h := filepath.Join(old, "3-no-ttl-fixed", "history.jsonl")
	b, err := os.ReadFile(h)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	if err := os.WriteFile(h, []byte(rest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines the table must have
		stderr string   // the one line of an error
	}{
		{"a report with violations", []string{"verify", dir}, 1, []string{
			"5 del-release           broken   pause-before-del    illegal (own)       illegal (own)       ok           ok",
			"12 fenced               fixed    pause-holder        illegal (inherent)  ok                  ok           ok",
			"6 runs, 6 as expected",
			"verify: every verdict as recorded"}, ""},
		{"one ok run", []string{"verify", filepath.Join(dir, "3-no-ttl-fixed")}, 0, []string{"1 run, 1 as expected"}, ""},
		{"one stuck run", []string{"verify", filepath.Join(dir, "3-no-ttl-broken")}, 1, []string{"stuck (own)"}, ""},
		{"an old history among others", []string{"verify", old}, 1, []string{"6 runs"},
			"3-no-ttl-fixed/history.jsonl: not a locklab history: its first line is not"},
		{"an old history alone", []string{"verify", filepath.Join(old, "3-no-ttl-fixed")}, 2, nil,
			"3-no-ttl-fixed/history.jsonl: not a locklab history: its first line is not"},
		{"no folder", []string{"verify", filepath.Join(dir, "nope")}, 2, nil, "is not a folder"},
		{"no run", []string{"verify", t.TempDir()}, 2, nil, "holds no run"},
		{"no argument", []string{"verify"}, 2, nil, "verify takes one folder"},
		{"two arguments", []string{"verify", dir, dir}, 2, nil, "verify takes one folder"},
		{"help", []string{"verify", "-h"}, 0, []string{"usage: check verify DIR"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if tc.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr: %q", stderr.String())
			}
			if tc.stderr != "" && (!strings.Contains(stderr.String(), tc.stderr) || strings.Count(stderr.String(), "\n") != 1) {
				t.Errorf("stderr %q, want one line with %q", stderr.String(), tc.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "5-del-release-broken", "run.html")); err != nil {
		t.Error("verify wrote no run page:", err)
	}
}
