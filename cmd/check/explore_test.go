package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestExploreUsageErrors(t *testing.T) {
	out := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no lock", []string{"-out", out}, "explore needs -lock NAME"},
		{"unknown lock", []string{"-lock", "nope", "-out", out}, `unknown lock "nope"`},
		{"unsupported topology", []string{"-lock", "del-release", "-topology", "redlock", "-out", out}, `lock del-release runs on single, not on topology "redlock"`},
		{"unknown topology", []string{"-lock", "token", "-topology", "ring", "-out", out}, `not on topology "ring"`},
		{"time and runs", []string{"-lock", "token", "-time", "1m", "-runs", "3", "-out", out}, "give -time or -runs, not both"},
		{"zero runs", []string{"-lock", "token", "-runs", "0", "-out", out}, "-runs must be positive"},
		{"negative time", []string{"-lock", "token", "-time", "-1s", "-out", out}, "-time must be positive"},
		{"bad replay", []string{"-lock", "token", "-replay", "12:x", "-out", out}, `-replay: replay "12:x": fault index "x"`},
		{"replay keeps a fault never drawn", []string{"-lock", "token", "-replay", "12:9", "-out", out}, "keeps fault 9"},
		{"replay with runs", []string{"-lock", "token", "-replay", "12", "-runs", "2", "-out", out}, "-replay makes one run"},
		{"stray argument", []string{"-lock", "token", "now"}, `unexpected argument "now"`},
		{"bad flag", []string{"-lock", "token", "-pitfall", "4"}, "flag provided but not defined: -pitfall"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"explore"}, tt.args...), &stdout, &stderr)
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

func TestExploreHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"explore", "-h"}, &stdout, &stderr); code != exitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if !strings.Contains(stdout.String(), "usage: check explore -lock NAME") || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
