package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
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
	// faketime is libfaketime's path when spec.Clock asks for a clock
	// that can jump and libfaketime is installed, else "".
	faketime string
	clockMu  sync.Mutex
	clock    time.Duration // how far ahead JumpClock moved the clocks
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
		s.faketime = proc.Libfaketime()
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
	if s.faketime != "" {
		s.clockMu.Lock()
		err := s.writeClock()
		s.clockMu.Unlock()
		if err != nil {
			return fmt.Errorf("start %s: %w", s.spec.Name, err)
		}
		env = append(os.Environ(), serverFaketimeEnv(s.faketime, filepath.Join(s.Dir(), serverClockName))...)
	}
	logStart, err := s.Spawn(env, s.program, s.spec.Args("127.0.0.1", s.port)...)
	if err != nil {
		return err
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
	old := s.Process()
	return s.Member.Restart(func() error {
		s.removeShm(old) // killed and reaped by now
		return s.spawn(ctx)
	})
}

// Stop stops the server and removes what libfaketime left of it.
func (s *server) Stop() error {
	p := s.Process()
	err := s.Member.Stop()
	if err == nil {
		s.removeShm(p)
	}
	return err
}

// JumpClock moves the server's clocks forward by d, for good (a restart
// keeps it), when it runs under libfaketime (cluster.ServerSpec.Clock):
// libfaketime reads the offset from a file at every reading of a clock,
// and, not told otherwise (FAKETIME_DONT_FAKE_MONOTONIC), moves
// CLOCK_MONOTONIC with CLOCK_REALTIME. Otherwise it says why it cannot.
func (s *server) JumpClock(d time.Duration) error {
	switch {
	case !s.spec.Clock:
		return fmt.Errorf("jump the clock of %s: its service does not run it under libfaketime", s.spec.Name)
	case s.faketime == "":
		return fmt.Errorf("jump the clock of %s: libfaketime is not installed (Debian: apt-get install faketime)", s.spec.Name)
	}
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	s.clock += d
	if err := s.writeClock(); err != nil {
		return fmt.Errorf("jump the clock of %s: %w", s.spec.Name, err)
	}
	return nil
}

// writeClock writes the clocks' offset for libfaketime through a rename,
// so that it never reads a half-written file. Called with s.clockMu held.
func (s *server) writeClock() error {
	path := filepath.Join(s.Dir(), serverClockName)
	if err := os.WriteFile(path+".new", []byte(fmt.Sprintf("%+.6f\n", s.clock.Seconds())), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".new", path)
}

// serverFaketimeEnv preloads libfaketime at lib with the clocks' offset
// read from file at every reading, the monotonic clock faked too (unlike
// a ZooKeeper JVM's: the clock a C server times expiry with is the one
// that must jump).
func serverFaketimeEnv(lib, file string) []string {
	return []string{"LD_PRELOAD=" + lib, "FAKETIME_TIMESTAMP_FILE=" + file, "FAKETIME_NO_CACHE=1"}
}

// removeShm removes the shared memory libfaketime 0.9.10 makes for each
// process that loads it, which a killed process (a crash, a restart)
// cannot remove itself, and which would break the next process that got
// its pid. Nothing is left without libfaketime.
func (s *server) removeShm(p *proc.Process) {
	if s.faketime == "" || p == nil {
		return
	}
	os.Remove(fmt.Sprintf("/dev/shm/faketime_shm_%d", p.Pid))
	os.Remove(fmt.Sprintf("/dev/shm/sem.faketime_sem_%d", p.Pid))
}
