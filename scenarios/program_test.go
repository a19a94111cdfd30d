package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/program"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// The shipped lock programs, run as check -lock runs them.
var (
	seed004PHP  = "php " + programPath("seed004/lock.php")
	redisPy     = "/usr/bin/python3 " + programPath("redispy.py")
	redisPyRenw = redisPy + " --renew"
	mariadbRow  = "sh " + programPath("mariadb-row.sh")
)

// programPath is a file of programs/, found from this package's folder, where
// go test runs its tests (the source's own path is not known under -trimpath).
func programPath(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "programs", name))
	if err != nil {
		panic(err)
	}
	return p
}

// needPHP skips, in one line, when seed 004's lock cannot run here.
func needPHP(t testing.TB) {
	t.Helper()
	out, err := exec.Command("php", "-m").Output()
	if err != nil || !strings.Contains("\n"+string(out), "\nredis\n") {
		t.Skip("php-cli with php-redis is not installed (make deps)")
	}
}

// needRedisPy skips, in one line, when redis-py cannot run here.
func needRedisPy(t testing.TB) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import redis").Run() != nil {
		t.Skip("python3-redis is not installed for /usr/bin/python3 (make deps)")
	}
}

// needMariaDBClient skips, in one line, when the mariadb client is missing.
func needMariaDBClient(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("mariadb"); err != nil {
		t.Skip("the mariadb client is not installed (make deps: mariadb-server)")
	}
}

// needFaketime skips, in one line, when a program's clock cannot be skewed.
func needFaketime(t testing.TB) {
	t.Helper()
	if !program.HasLibfaketime() {
		t.Skip("libfaketime is not installed (make deps: faketime)")
	}
}

// runProgram puts a lock program through one scenario.
func runProgram(t *testing.T, scenario, command string) *runner.Result {
	t.Helper()
	return settled(t, func() (*runner.Result, error) {
		return scenarios.Run(context.Background(), scenario, program.New(command),
			runner.Options{Seed: 1, Dir: t.TempDir()})
	})
}

// settled makes a run until the machine stalled none of its clients, three
// times at most, and fails t on an error. Tests run side by side, and a run
// the machine stalled is unknown: the checkers' way of saying "run again".
func settled(t *testing.T, run func() (*runner.Result, error)) *runner.Result {
	t.Helper()
	for try := 1; ; try++ {
		res, err := run()
		if err != nil {
			t.Fatal(err)
		}
		if try == 3 || res.Late() == nil {
			return res
		}
		t.Logf("try %d: the machine stalled a client; running again", try)
	}
}

func TestProgramLookup(t *testing.T) {
	l, err := locks.Lookup("exec:" + redisPy)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(l.Name, "/ :") {
		t.Errorf("name %q cannot name a folder", l.Name)
	}
	if _, err := locks.Lookup("exec:no-such-program-locklab x"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing program: %v, want one line saying it is not found", err)
	}
}

// TestSeed004ClockSkew: seed 004's PHP lock counts whole seconds; with the
// TTL it needs, a clock running ahead past it takes the lock over with
// GETSET while its holder still holds it.
func TestSeed004ClockSkew(t *testing.T) {
	t.Parallel()
	needPHP(t)
	needFaketime(t)
	res := runProgram(t, "clock-skew-seconds", seed004PHP)
	if len(res.Spoiled) > 0 {
		t.Fatalf("spoiled: %v", res.Spoiled)
	}
	if res.Verdicts[checker.CheckLock] != checker.Illegal {
		t.Errorf("lock: %s, want illegal: %+v", res.Verdicts[checker.CheckLock], res.Checks)
	}
}

// TestRedisPyIsTheTokenLock: redis-py's bare Lock is SET NX PX with a
// token and a Lua compare-and-delete, the catalogue's token lock; in every
// scenario of the single topology it gets the token lock's verdicts. That
// includes the scenarios that strike the lock's own commands (a crash after
// the SET that took the key, pauses around the release's script, dropped
// replies): the program's commands pass its relay, which runs them through
// the same failpoints, and its faults are those the token lock got.
func TestRedisPyIsTheTokenLock(t *testing.T) {
	t.Parallel()
	needRedisPy(t)
	needFaketime(t)
	token, err := locks.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios.All() {
		if s.Topology != cluster.Single {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel() // a run the machine stalls is made again, below
			opts := func() runner.Options { return runner.Options{Seed: 1, Dir: t.TempDir()} }
			var want, got *runner.Result
			// A run the machine stalled is unknown and says "run again": on a
			// loaded machine, so does this test, a few times.
			for try := 1; ; try++ {
				var err error
				want, err = runner.Run(context.Background(), s, token.New, opts())
				if errors.Is(err, local.ErrNoMariaDB) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatalf("token: %v", err)
				}
				got, err = runner.Run(context.Background(), s, program.New(redisPy), opts())
				if err != nil {
					t.Fatalf("redis-py: %v (spoiled: %q)", err, got.Spoiled)
				}
				if try == 3 || got.Late() == nil && want.Late() == nil {
					break
				}
				t.Logf("try %d: the machine stalled a client; running again", try)
			}
			for _, c := range []string{checker.CheckLock, checker.CheckResource, checker.CheckLiveness, checker.CheckHandover} {
				if fewHandovers(got, c) || fewHandovers(want, c) {
					// Luck, in either lock: with nested, a non-reentrant lock
					// changes hands two or three times a run, by expiry.
					t.Logf("%s: redis-py %s, token %s: too few handovers to judge (%s; %s)",
						c, got.Verdicts[c], want.Verdicts[c], detail(got, c), detail(want, c))
					continue
				}
				if got.Verdicts[c] == checker.Unknown {
					t.Errorf("redis-py: %s unknown (%s)", c, detail(got, c))
				}
				if got.Verdicts[c] != want.Verdicts[c] {
					t.Errorf("%s: redis-py %s (%s), token %s (%s)", c, got.Verdicts[c], detail(got, c), want.Verdicts[c], detail(want, c))
				}
			}
			if commandFaults(s) {
				// The same commands were struck, the same way.
				g, w := struck(t, got.Dir), struck(t, want.Dir)
				if !slices.Equal(g, w) {
					t.Errorf("struck commands: redis-py %q, token %q", g, w)
				}
				t.Logf("struck: %q", g)
			}
			t.Logf("redis-py %v, token %v", got.Verdicts, want.Verdicts)
		})
	}
}

// detail is what checker c of res found.
func detail(res *runner.Result, c string) string {
	for _, ch := range res.Checks {
		if ch.Checker == c {
			return ch.Detail
		}
	}
	return ""
}

// fewHandovers reports whether checker c of res is the handover check
// declining to judge from too few handovers.
func fewHandovers(res *runner.Result, c string) bool {
	return c == checker.CheckHandover && res.Verdicts[c] == checker.Unknown && strings.Contains(detail(res, c), "too few handovers")
}

// commandFaults reports whether s strikes the lock's own Redis commands.
func commandFaults(s runner.Scenario) bool {
	for _, f := range s.Failpoints {
		if strings.HasPrefix(f.Name, "before ") || strings.HasPrefix(f.Name, "after ") {
			return true
		}
	}
	return false
}

// struckCommand finds the command a fault struck in its detail:
// "SET (acquire command 1)".
var struckCommand = regexp.MustCompile(`[A-Z]+ \((acquire|release|background) command \d+\)`)

// struck lists, sorted, what the command faults of the run in dir did:
// each crash, pause, delay or dropped reply with the command it struck.
func struck(t *testing.T, dir string) []string {
	t.Helper()
	ops, err := history.ReadFile(filepath.Join(dir, runner.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, op := range ops {
		cmd := struckCommand.FindString(op.Detail)
		if cmd == "" || (op.Kind != history.KindCrash && op.Kind != history.KindFault) {
			continue
		}
		what := op.Fault
		if op.Kind == history.KindCrash {
			what = "crash"
		}
		out = append(out, fmt.Sprintf("client %d: %s at %s", op.Client, what, cmd))
	}
	slices.Sort(out)
	return out
}

// TestBadPrograms: a program that prints garbage, exits, never answers or
// is not there spoils its run with one line saying so; every verdict is
// unknown, and none of its processes outlives the run.
func TestBadPrograms(t *testing.T) {
	t.Parallel()
	s, err := scenarios.Lookup("contention")
	if err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	for _, tc := range []struct{ name, command, want string }{
		{"garbage", "while read l; do echo hello; done", `answered "hello" to "release locklab-warm-up": not in the protocol`},
		{"early exit", "echo boom >&2; exit 3", "exited (exit status 3) after 0 answer(s): boom"},
		{"silence", "sleep " + mark + " & exec cat >/dev/null", `never answered its first request "release locklab-warm-up"`},
		{"not found", "no-such-locklab-program", "no-such-locklab-program: not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := runner.Run(context.Background(), s, program.New(tc.command), runner.Options{Seed: 1})
			if err != nil {
				t.Fatalf("err %v: a run that ran returns its result and no error", err)
			}
			if len(res.Spoiled) != 1 || !strings.Contains(res.Spoiled[0], tc.want) {
				t.Errorf("spoiled: %q, want one line with %q", res.Spoiled, tc.want)
			}
			for c, v := range res.Verdicts {
				if v != checker.Unknown {
					t.Errorf("%s: %s, want unknown", c, v)
				}
			}
			// Only silence's command holds the mark: the cases run side by side.
			if left := running(mark); strings.Contains(tc.command, mark) && len(left) > 0 {
				t.Errorf("processes left after the run: %v", left)
			}
		})
	}
}

// running lists the live processes whose command line holds mark.
func running(mark string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(cmd), mark) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is dead; its parent, gone too, leaves it to init
		}
		found = append(found, filepath.Base(d)+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return found
}

// TestNoProgramOutlivesCtrlC: a test binary running lock programs is
// interrupted (SIGINT, as Ctrl-C) or killed (SIGKILL); no program survives.
func TestNoProgramOutlivesCtrlC(t *testing.T) {
	if os.Getenv("LOCKLAB_PROGRAM_HELPER") != "" {
		return // the helper runs in TestProgramHelper
	}
	needRedisPy(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			mark := fmt.Sprintf("locklab-mark-%d-%d", os.Getpid(), sig)
			cmd := exec.Command(os.Args[0], "-test.run=^TestProgramHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LOCKLAB_PROGRAM_HELPER="+mark)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.Now().Add(30 * time.Second)
			for len(running(mark)) < 4 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the helper's programs never started: %v", running(mark))
				}
				time.Sleep(50 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the helper did not end within 30 s of %s", sig)
			}
			// SIGKILL leaves the programs to the kernel (Pdeathsig): give it a moment.
			deadline = time.Now().Add(5 * time.Second)
			for len(running(mark)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if left := running(mark); len(left) > 0 {
				t.Errorf("after %s: %v", sig, left)
			}
		})
	}
}

// TestProgramHelper is the process TestNoProgramOutlivesCtrlC interrupts:
// redis-py clients in a long run, stopped by SIGINT as check stops.
func TestProgramHelper(t *testing.T) {
	mark := os.Getenv("LOCKLAB_PROGRAM_HELPER")
	if mark == "" {
		t.Skip("run by TestNoProgramOutlivesCtrlC")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := scenarios.Lookup("contention")
	if err != nil {
		t.Fatal(err)
	}
	_, err = runner.Run(ctx, s, program.New(redisPy+" "+mark), runner.Options{Seed: 1, Duration: time.Minute})
	t.Logf("run ended: %v", err)
}

// TestShippedPrograms: the shipped programs in a few telling scenarios.
func TestShippedPrograms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario, command string
		need              func(testing.TB)
		lock              checker.Verdict
		struck            []string // what a command fault may strike, each time it fired; none for no fault
	}{
		{"slow-work", redisPyRenw, needRedisPy, checker.OK, nil},
		// SIGSTOP stops the renewal thread too: a real stop-the-world pause.
		{"pause-holder", redisPyRenw, needRedisPy, checker.Illegal, nil},
		// Seed 004 through its relay: the crash strikes right after the
		// command that took the key: its SET NX EX, or, when that acquire
		// was the seed's takeover (SET NX refused, GET, GETSET, which its
		// whole seconds make happen under contention), the GETSET, which
		// wrote the client's own time over the key. The pauses strike its
		// unlock's GET (then DEL).
		{"crash-after-setnx", seed004PHP, needPHP, "", []string{"client 0: crash at SET (acquire command 1)", "client 0: crash at GETSET (acquire command 3)"}},
		{"pause-before-del", seed004PHP, needPHP, "", []string{"client 0: client pause at GET (release command 1)"}},
		// A program on the mariadb topology dials LOCKLAB_MYSQL, the
		// client's link to the server.
		{"contention-sql", mariadbRow, needMariaDBClient, checker.OK, nil},
	} {
		t.Run(tc.scenario+"/"+filepath.Base(strings.Fields(tc.command)[1]), func(t *testing.T) {
			t.Parallel()
			tc.need(t)
			res := runProgram(t, tc.scenario, tc.command)
			if len(res.Spoiled) > 0 {
				t.Fatalf("spoiled: %v", res.Spoiled)
			}
			if tc.lock != "" && res.Verdicts[checker.CheckLock] != tc.lock {
				t.Errorf("lock: %s, want %s: %+v", res.Verdicts[checker.CheckLock], tc.lock, res.Checks)
			}
			if tc.struck != nil {
				got := struck(t, res.Dir)
				if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return !slices.Contains(tc.struck, s) }) {
					t.Errorf("struck %q, want only any of %q", got, tc.struck)
				}
			}
			t.Logf("%v", res.Verdicts)
		})
	}
}
