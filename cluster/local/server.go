package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/network"
)

// serverStartCap bounds a generic server's start, from its spawn to
// serving: the servers started so (memcached) serve within milliseconds.
const serverStartCap = 10 * time.Second

// server is a server of a lock service started from its ServerSpec
// (cluster.ServerStarter): a process of this machine on a port of its own,
// which keeps nothing across a restart but what its program keeps itself.
type server struct {
	*proc.Member
	spec    cluster.ServerSpec
	program string
	port    int
	// clock is the server's clocks, which JumpClock moves, when spec.Clock
	// asks for them; nil otherwise.
	clock *proc.Clock
}

// serverClockName is a server's libfaketime timestamp file, in its
// directory: the offset of its clocks from the real ones.
const serverClockName = "clock"

// StartServer starts spec's program on a free loopback port, as a process
// of this machine, and returns once it serves.
func (session) StartServer(ctx context.Context, spec cluster.ServerSpec) (cluster.Node, error) {
	program, err := exec.LookPath(spec.Program)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not installed (make deps installs it): %v", spec.Missing, spec.Program, err)
	}
	dir, err := filepath.Abs(filepath.Join(spec.Dir, spec.Name))
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	s := &server{Member: proc.NewMember(filepath.Base(spec.Program), spec.Name, dir, "server.log"), spec: spec, program: program}
	if spec.Clock {
		s.clock = proc.NewMonotonicClock(filepath.Join(dir, serverClockName))
	}
	// StablePort keeps the port out of the ephemeral range, where a
	// restart could find it taken by an outgoing connection.
	if s.port, err = network.StablePort(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	s.HoldPort(s.port)
	if err := s.spawn(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// spawn runs the program and waits until it serves, or exits.
func (s *server) spawn(ctx context.Context) error {
	var env []string
	if s.clock != nil {
		clockEnv, err := s.clock.Env()
		if err != nil {
			return fmt.Errorf("start %s: %w", s.spec.Name, err)
		}
		if clockEnv != nil {
			env = append(os.Environ(), clockEnv...)
		}
	}
	logStart, err := s.Spawn(env, s.program, s.spec.Args("127.0.0.1", s.port)...)
	if err != nil {
		return err
	}
	if s.clock != nil {
		s.clock.Watch(s.Process())
	}
	ctx, cancel := context.WithTimeout(ctx, serverStartCap)
	defer cancel()
	return backendkit.PollUntil(ctx, s.spec.Name+" serves", func(ctx context.Context) (string, error) {
		if s.Process().Exited() {
			return "", fmt.Errorf("exited; log tail:\n%s", proc.LogTail(s.LogPath(), logStart, 10))
		}
		if err := s.spec.Ready(ctx, s.Addr()); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
}

// Addr is where the server listens; it stays the same across restarts.
func (s *server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Restart runs the program again on the same port. The server keeps what
// its program keeps on disk, whatever keepData says: a server that keeps
// nothing (memcached) restarts empty either way.
func (s *server) Restart(ctx context.Context, _ bool) error {
	return s.Member.Restart(func() error { return s.spawn(ctx) })
}

// JumpClock moves the server's clocks forward by d, for good (a restart
// keeps it), when it runs under libfaketime (cluster.ServerSpec.Clock),
// its monotonic clock with its wall clock (proc.NewMonotonicClock).
// Otherwise it says why it cannot.
func (s *server) JumpClock(d time.Duration) error {
	if s.clock == nil {
		return fmt.Errorf("jump the clock of %s: its service does not run it under libfaketime", s.spec.Name)
	}
	if err := s.clock.Jump(d); err != nil {
		return fmt.Errorf("jump the clock of %s: %w", s.spec.Name, err)
	}
	return nil
}
