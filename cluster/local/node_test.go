package local

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
)

// startTestNode starts a node in a fresh temporary directory and stops it when the
// test ends. A missing redis-server fails the test: CI must not pass by skipping.
func startTestNode(tb testing.TB, cfg cluster.NodeConfig) *Process {
	tb.Helper()
	if cfg.Name == "" {
		cfg.Name = "n1"
	}
	if cfg.Dir == "" {
		cfg.Dir = tb.TempDir()
	}
	n, err := StartProcess(tb.Context(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := n.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return n
}

// within returns a context that ends after d, for commands expected to answer.
func within(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

func TestNodeSetGet(t *testing.T) {
	t.Parallel()
	n := startTestNode(t, cluster.NodeConfig{Name: "inventory"})

	if got := n.Name(); got != "inventory" {
		t.Errorf("Name() = %q, want inventory", got)
	}
	if want := "127.0.0.1:" + strconv.Itoa(n.Port()); n.Addr() != want || n.Port() == 0 {
		t.Errorf("Addr() = %q, Port() = %d; want %q and a non-zero port", n.Addr(), n.Port(), want)
	}
	if !n.Running() {
		t.Error("Running() = false after StartNode")
	}
	ctx := within(t, 2*time.Second)
	if err := n.Admin().Set(ctx, "stock", "5", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := n.Admin().Get(ctx, "stock").Result(); err != nil || got != "5" {
		t.Fatalf("GET = %q, %v; want 5", got, err)
	}
}

func TestNodeKill(t *testing.T) {
	t.Parallel()
	n := startTestNode(t, cluster.NodeConfig{})

	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() {
		t.Error("Running() = true after Kill")
	}
	err := n.Admin().Ping(within(t, 2*time.Second)).Err()
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("PING after Kill: %v, want connection refused", err)
	}
	if err := n.Kill(); err != nil {
		t.Errorf("second Kill: %v, want nil", err)
	}
}

func TestNodeRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		persistence cluster.Persistence
		kill        bool // Kill before Restart; otherwise Restart kills
		keepData    bool
		wantKept    bool
	}{
		{cluster.AOFAlways, true, true, true},
		{cluster.AOFAlways, false, true, true},
		{cluster.AOFAlways, true, false, false},
		{cluster.AOFEverySec, true, false, false},
		{cluster.NoPersistence, true, true, false},
		{cluster.NoPersistence, true, false, false},
	}
	for _, tt := range tests {
		name := tt.persistence.String()
		if tt.kill {
			name += "/kill"
		}
		if tt.keepData {
			name += "/keep"
		} else {
			name += "/lose"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n := startTestNode(t, cluster.NodeConfig{Persistence: tt.persistence})
			addr := n.Addr()
			ctx := within(t, 5*time.Second)
			if err := n.Admin().Set(ctx, "lock", "owner-1", 0).Err(); err != nil {
				t.Fatalf("SET: %v", err)
			}
			if tt.kill {
				if err := n.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			if err := n.Restart(ctx, tt.keepData); err != nil {
				t.Fatal(err)
			}

			if !n.Running() {
				t.Error("Running() = false after Restart")
			}
			if n.Addr() != addr {
				t.Errorf("Addr() = %s after Restart, was %s", n.Addr(), addr)
			}
			got, err := n.Admin().Get(ctx, "lock").Result()
			switch {
			case tt.wantKept && (err != nil || got != "owner-1"):
				t.Errorf("GET after Restart = %q, %v; want owner-1", got, err)
			case !tt.wantKept && !errors.Is(err, redis.Nil):
				t.Errorf("GET after Restart = %q, %v; want the key gone", got, err)
			}
		})
	}
}

// TestNodeRestartSamePort checks that clients holding the address reach the node
// again, which is what makes a restart a fault rather than a new node.
func TestNodeRestartSamePort(t *testing.T) {
	t.Parallel()
	n := startTestNode(t, cluster.NodeConfig{})
	other := redis.NewClient(&redis.Options{Addr: n.Addr()})
	defer other.Close()

	for i := range 3 {
		if err := n.Restart(t.Context(), false); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
		if err := other.Ping(within(t, 2*time.Second)).Err(); err != nil {
			t.Fatalf("PING %s after restart %d: %v", n.Addr(), i, err)
		}
	}
}

func TestNodePause(t *testing.T) {
	t.Parallel()
	n := startTestNode(t, cluster.NodeConfig{})
	if err := n.Admin().Set(within(t, 2*time.Second), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if !n.Running() {
		t.Error("Running() = false while paused")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := n.Admin().Get(ctx, "k").Err()
	if err == nil {
		t.Fatal("GET on a paused node answered")
	}
	var timeout interface{ Timeout() bool }
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &timeout) && timeout.Timeout()) {
		t.Errorf("GET on a paused node: %v, want a timeout", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("GET on a paused node took %v, want about the 200ms deadline", elapsed)
	}

	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if got, err := n.Admin().Get(within(t, 2*time.Second), "k").Result(); err != nil || got != "v" {
		t.Errorf("GET after Resume = %q, %v; want v", got, err)
	}
}

func TestNodeStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before func(*Process) error
	}{
		{"running", func(*Process) error { return nil }},
		{"killed", (*Process).Kill},
		{"paused", (*Process).Pause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := startTestNode(t, cluster.NodeConfig{Persistence: cluster.AOFEverySec})
			pid := n.Process().Pid
			if err := tt.before(n); err != nil {
				t.Fatal(err)
			}

			if err := n.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(n.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("node directory after Stop: %v, want it gone", err)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("kill(%d, 0) after Stop = %v, want ESRCH", pid, err)
			}
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("kill(-%d, 0) after Stop = %v, want ESRCH: the process group lives on", pid, err)
			}
			if n.Running() {
				t.Error("Running() = true after Stop")
			}
			if err := n.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			if err := n.Restart(t.Context(), true); err == nil {
				t.Error("Restart after Stop succeeded")
			}
		})
	}
}

func TestStartNodeFails(t *testing.T) {
	t.Parallel()
	taken := startTestNode(t, cluster.NodeConfig{Name: "owner"})

	tests := []struct {
		name      string
		cfg       cluster.NodeConfig
		wantInLog string
	}{
		{"port taken", cluster.NodeConfig{Port: taken.Port()}, "Address already in use"},
		{"bad argument", cluster.NodeConfig{Args: []string{"--no-such-option", "1"}}, "no-such-option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Name = "second"
			tt.cfg.Dir = t.TempDir()
			n, err := StartProcess(t.Context(), tt.cfg)
			if err == nil {
				n.Stop()
				t.Fatal("StartNode succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantInLog) || !strings.Contains(err.Error(), "second") {
				t.Errorf("error does not name the node and quote %q from its log:\n%v", tt.wantInLog, err)
			}
			if _, err := os.Stat(filepath.Join(tt.cfg.Dir, "second")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("node directory after a failed start: %v, want it gone", err)
			}
		})
	}
	// The failed start must not have disturbed the node that owns the port.
	if err := taken.Admin().Ping(within(t, 2*time.Second)).Err(); err != nil {
		t.Errorf("PING the port owner: %v", err)
	}
}

func TestRedisServerPath(t *testing.T) {
	installed, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH (run `make deps`): %v", err)
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-redis-server")
	notExec := filepath.Join(dir, "redis-server.txt")
	if err := os.WriteFile(notExec, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		redisServer string // "" unsets REDIS_SERVER
		path        string
		wantInErr   string // "" means no error
	}{
		{"from PATH", "", os.Getenv("PATH"), ""},
		{"from REDIS_SERVER", installed, "", ""},
		{"REDIS_SERVER missing", missing, os.Getenv("PATH"), missing},
		{"REDIS_SERVER not executable", notExec, os.Getenv("PATH"), notExec},
		{"REDIS_SERVER a directory", dir, os.Getenv("PATH"), dir},
		{"nothing on PATH", "", "", "make deps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			t.Setenv("REDIS_SERVER", tt.redisServer)
			if tt.redisServer == "" {
				os.Unsetenv("REDIS_SERVER") // t.Setenv restores it afterwards
			}

			got, err := RedisServerPath()
			if tt.wantInErr == "" {
				if err != nil || got != installed {
					t.Errorf("RedisServerPath() = %q, %v; want %q", got, err, installed)
				}
				return
			}
			if !errors.Is(err, ErrNoRedisServer) || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("RedisServerPath() = %q, %v; want an error wrapping ErrNoRedisServer that mentions %q", got, err, tt.wantInErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// BenchmarkStartNode measures starting and stopping one node, the main part of
// starting the single topology.
func BenchmarkStartNode(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		n, err := StartProcess(b.Context(), cluster.NodeConfig{Name: "bench", Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if err := n.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNodeAdminAfterDowntime checks that Admin works as soon as Restart returns, even
// after the harness hammered the dead node, which trips go-redis's dial circuit breaker.
func TestNodeAdminAfterDowntime(t *testing.T) {
	t.Parallel()
	n := startTestNode(t, cluster.NodeConfig{})
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range n.Admin().Options().PoolSize {
		wg.Go(func() { n.Admin().Ping(t.Context()) })
	}
	wg.Wait()
	start := time.Now()
	if err := n.Restart(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart took %v", time.Since(start))
	if err := n.Admin().Ping(within(t, 2*time.Second)).Err(); err != nil {
		t.Errorf("PING right after Restart: %v", err)
	}
}
