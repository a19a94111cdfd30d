package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown pitfall", []string{"-pitfall", "nope"}, `unknown pitfall "nope"`},
		{"bad flag", []string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{"negative duration", []string{"-duration", "-1s"}, "-duration must not be negative"},
		{"bad duration", []string{"-duration", "soon"}, "invalid value"},
		{"stray argument", []string{"run"}, `unexpected argument "run"`},
		{"list with arguments", []string{"list", "x"}, "check list takes no arguments"},
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
	for i, r := range runs {
		if len(r) != len(keys) {
			t.Errorf("run %d has keys %v, want %v", i, r, keys)
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
	for _, f := range []string{"index.html", "4-no-release-broken/history.jsonl", "4-no-release-fixed/lock.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
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
