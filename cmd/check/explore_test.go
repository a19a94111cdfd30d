package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/explore/schedule"
)

func TestExploreUsageErrors(t *testing.T) {
	out := t.TempDir()
	next := fmt.Sprintf("v%d:12", schedule.ReplayVersion+1) // a version this build does not know
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no lock", []string{"-out", out}, "explore needs -lock NAME"},
		{"unknown lock", []string{"-lock", "nope", "-out", out}, `unknown lock "nope"`},
		{"unsupported topology", []string{"-lock", "del-release", "-topology", "redlock", "-out", out}, `lock del-release runs on single, not on topology "redlock"`},
		{"unknown topology", []string{"-lock", "token", "-topology", "ring", "-out", out}, `not on topology "ring"`},
		{"unknown service", []string{"-lock", "token", "-service", "ring", "-out", out}, `unknown service "ring"`},
		{"time and runs", []string{"-lock", "token", "-time", "1m", "-runs", "3", "-out", out}, "give -time or -runs, not both"},
		{"zero runs", []string{"-lock", "token", "-runs", "0", "-out", out}, "-runs must be positive"},
		{"negative time", []string{"-lock", "token", "-time", "-1s", "-out", out}, "-time must be positive"},
		{"bad replay", []string{"-lock", "token", "-replay", "12:x", "-out", out}, `-replay: replay "12:x": fault index "x"`},
		{"replay keeps a fault never drawn", []string{"-lock", "token", "-replay", "12:9", "-out", out}, "keeps fault 9"},
		{"versioned replay keeps a fault never drawn", []string{"-lock", "token", "-replay", "v1:12:9", "-out", out}, `replay v1:12 keeps fault 9`},
		{"bad replay version", []string{"-lock", "token", "-replay", "vx:12", "-out", out}, `-replay: replay "vx:12": want vN:SEED or vN:SEED:i,j with N a format version`},
		{"replay of a later version", []string{"-lock", "token", "-replay", next, "-out", out}, fmt.Sprintf("-replay: replay %q: unknown format version %d", next, schedule.ReplayVersion+1)},
		{"replay with runs", []string{"-lock", "token", "-replay", "12", "-runs", "2", "-out", out}, "-replay makes one run"},
		{"replay with stop at first", []string{"-lock", "token", "-replay", "12", "-stop-at-first", "-out", out}, "-replay makes one run"},
		{"stop at first and keep going", []string{"-lock", "token", "-stop-at-first", "-keep-going", "-out", out}, "give -stop-at-first or -keep-going, not both"},
		{"stray argument", []string{"-lock", "token", "now"}, `unexpected argument "now"`},
		{"bad shard", []string{"-lock", "token", "-seed", "3", "-shard", "4/4", "-out", out}, "-shard: shard 4/4: want 0 <= index < count"},
		{"shard without seed", []string{"-lock", "token", "-shard", "1/4", "-out", out}, "shard 1/4 needs -seed"},
		{"shard of a replay", []string{"-lock", "token", "-replay", "12", "-shard", "1/4", "-out", out}, "-replay makes one run: it is not sharded"},
		{"bad flag", []string{"-lock", "token", "-pitfall", "4"}, "flag provided but not defined: -pitfall"},
		{"ttl of nothing", []string{"-lock", "token", "-ttl", "-1s", "-out", out}, "-ttl must be a lease above 0"},
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

// TestExploreStopFlags: -stop-at-first stops at the first bug, -stop-after
// N after N; -keep-going, kept for old scripts, is the default.
func TestExploreStopFlags(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		stop  bool
		after int
	}{
		{nil, false, 0},
		{[]string{"-keep-going"}, false, 0},
		{[]string{"-stop-at-first"}, true, 0},
		{[]string{"-stop-after", "2"}, false, 2},
	} {
		in, err := parseExplore(append([]string{"-lock", "token", "-out", t.TempDir()}, tc.flags...), &bytes.Buffer{}, noEnv)
		if err != nil {
			t.Fatalf("%v: %v", tc.flags, err)
		}
		if in.cfg.StopAtFirst != tc.stop || in.cfg.StopAfter != tc.after {
			t.Errorf("%v: stop at first %v after %d, want %v after %d", tc.flags, in.cfg.StopAtFirst, in.cfg.StopAfter, tc.stop, tc.after)
		}
	}
	if _, err := parseExplore([]string{"-lock", "token", "-out", t.TempDir(), "-stop-after", "-1"}, &bytes.Buffer{}, noEnv); err == nil {
		t.Error("-stop-after -1 was taken")
	}
}

func TestExploreSummary(t *testing.T) {
	illegal := checker.Check{Checker: checker.CheckLock, Verdict: checker.Illegal, Kind: checker.Own, Detail: "two holders", KindWhy: "the reference lock stays ok"}
	rep := &explore.Report{Lock: "blind", Topology: cluster.Single, Seed: 7, Runs: 40, Own: 12, Inherent: 3, Missed: 5, Again: 2, CutShort: 4, WallS: 120, RunsPerMin: 20,
		Bugs: []explore.Bug{
			{Signature: "lock illegal · slow work in critical section", FirstS: 4.25, Runs: 10, Replay: "99:1", ReportDir: "out/explore-blind-single-1",
				Found: explore.Found{Drawn: 2, Kept: 1, Shrinks: 2, Plan: "4 clients; [1] slow work", Checks: []checker.Check{illegal}}},
			{Signature: "lock illegal · lost reply of release command 1", FirstS: 61, Runs: 2, Replay: "123", ReportDir: "out/explore-blind-single-2",
				Found: explore.Found{Drawn: 3, Kept: 2, Shrinks: 1, ShrinkCut: true, Plan: "4 clients; [0] lost reply", Checks: []checker.Check{illegal}}},
		}}
	var b strings.Builder
	exploreSummary(&b, rep, explore.Config{})
	out := b.String()
	for _, want := range []string{
		"blind on single, seed 7: 40 runs; own 12, inherent 3",
		"; missed 5 (no drawn fault struck)",
		"; late 2 (the machine ran late: made again)",
		"; cut short 4 (under way at the end: stopped, counted in no outcome)",
		"shrunk from 2 faults to 1 in 2 reruns\n",
		"shrunk from 3 faults to 2 in 1 reruns; the end of -time cut the shrink short: fewer may do\n",
		"bug  signature",
		"1    lock illegal · slow work in critical section    4.2      10    99:1    out/explore-blind-single-1",
		"2    lock illegal · lost reply of release command 1  61.0     2     123     out/explore-blind-single-2",
		"own because the reference lock stays ok",
		"replay: check explore -lock blind -topology single -replay 123",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last, want := lines[len(lines)-1], "40 runs in 120s, 20.0 runs/min; 2 distinct bugs"; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
}

// noEnv is an environment with nothing set.
func noEnv(string) (string, bool) { return "", false }

// TestExploreUsageSaysWhereEachKindIsDrawn: each kind's line in
// `check explore -h` names every service it is drawn on, and no other.
func TestExploreUsageSaysWhereEachKindIsDrawn(t *testing.T) {
	var out strings.Builder
	exploreUsage(&out)
	lines := map[string]string{}
	for line := range strings.Lines(out.String()) {
		if f := strings.Fields(line); len(f) > 2 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "  -") {
			lines[f[0]] = line
		}
	}
	for _, k := range schedule.Kinds() {
		line, ok := lines[k.Name]
		if !ok {
			t.Errorf("%s: no line in the usage", k.Name)
			continue
		}
		where := strings.TrimSpace(strings.TrimPrefix(line, "  "+k.Name))
		where = where[:len(where)-len(k.About)-1]
		for _, s := range cluster.Services() {
			drawn := slices.ContainsFunc(cluster.TopologiesOf(s), k.DrawnOn)
			named := strings.Contains(where, "every service") || slices.Contains(strings.FieldsFunc(where, func(r rune) bool { return r == ',' || r == ':' || r == ' ' }), string(s))
			if drawn != named {
				t.Errorf("%s: drawn on %s: %v, but the usage says %q", k.Name, s, drawn, where)
			}
		}
	}
}

// TestReplayLineCanBePasted: the replay line names the lock as the user
// did, quoted for the shell, with the fault space, so that it can be
// pasted as it is.
func TestReplayLineCanBePasted(t *testing.T) {
	in, err := parseExplore([]string{"-lock", "exec:python3 lock.py --it's", "-faults", "-slow-work", "-runs", "1", "-out", t.TempDir()}, &bytes.Buffer{}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	rep := &explore.Report{Lock: in.cfg.Lock, Command: in.cfg.Command, Topology: in.cfg.Topology}
	got := rep.ReplayLine(explore.Bug{Replay: "v2:7"})
	want := `check explore -lock 'exec:python3 lock.py --it'\''s' -topology single -faults -slow-work -replay v2:7`
	if got != want {
		t.Errorf("replay line\n  %s\nwant\n  %s", got, want)
	}
	for s, want := range map[string]string{"token-watchdog": "token-watchdog", "": "''", "a b": "'a b'", "-x,y": "-x,y"} {
		if got := shellQuote(s); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestParallelByService: explore's default -parallel is sized by what a
// run of the service costs; a -parallel given wins.
func TestParallelByService(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-lock", "token-watchdog"}, 4 * runtime.NumCPU()},
		{[]string{"-lock", "zk-fenced"}, runtime.NumCPU() + 1},
		{[]string{"-lock", "zk-fenced", "-parallel", "8"}, 8},
	} {
		in, err := parseExplore(append(tc.args, "-out", t.TempDir()), &bytes.Buffer{}, noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if in.cfg.Parallel != tc.want {
			t.Errorf("%v: -parallel %d, want %d", tc.args, in.cfg.Parallel, tc.want)
		}
	}
}
