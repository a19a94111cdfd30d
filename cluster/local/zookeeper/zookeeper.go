// Package zookeeper runs a ZooKeeper ensemble as local processes: one JVM
// per server (QuorumPeerMain) on free loopback ports, each with its own
// zoo.cfg and data directory under the run's directory.
package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service/zookeeper/ensemble"
)

const (
	zkLogName = "zookeeper.log"
	// zkStartCap bounds the start of an ensemble, from nothing to a
	// leader: three JVMs on two shared cores.
	zkStartCap = 60 * time.Second
	// zkPoll is how often a start or a restart asks the servers for their
	// mode: each ask is a connection to a JVM, so not every few
	// milliseconds.
	zkPoll = 50 * time.Millisecond
	// zkDefaultJar is where Debian's zookeeper package puts the server;
	// its manifest names the jars it needs.
	zkDefaultJar = "/usr/share/java/zookeeper.jar"
	// zkLoggerJar, when present, makes the server log to its log file
	// (stderr) instead of nowhere.
	zkLoggerJar = "/usr/share/java/slf4j-simple.jar"
	// zkClockName is the server's libfaketime timestamp file: the offset
	// of its wall clock from the real one (JumpClock).
	zkClockName = "clock"
	// zkBindTailLines is how much of a server's log tail holds the
	// BindException of a taken port above its stack trace.
	zkBindTailLines = 40
)

// Path returns the java binary ($JAVA, else the one on PATH) and
// the ZooKeeper server jar ($ZOOKEEPER_JAR, else Debian's). The error says
// how to install them.
func Path() (java, jar string, err error) {
	name := "java"
	if p := os.Getenv("JAVA"); p != "" {
		name = p
	}
	jar = zkDefaultJar
	if p := os.Getenv("ZOOKEEPER_JAR"); p != "" {
		jar = p
	}
	java, jerr := exec.LookPath(name)
	if _, serr := os.Stat(jar); jerr != nil || serr != nil {
		return "", "", fmt.Errorf("%w: run `make deps` (Debian/Ubuntu: apt-get install -y zookeeper) or set JAVA and ZOOKEEPER_JAR", ensemble.ErrNoZooKeeper)
	}
	return java, jar, nil
}

// Ensemble is n ZooKeeper servers on 127.0.0.1 that form one
// ensemble, each with its own zoo.cfg and data under the run's directory.
type Ensemble struct {
	servers []*Server
	admin   *zk.Conn
	once    sync.Once
	err     error
}

// Start starts n servers at once on free loopback ports (a client,
// a quorum and an election port each) and returns once one leads a
// quorum. A port found free may be taken by another process before a JVM
// binds it, seconds later: the ensemble then starts again on other ports.
// On failure nothing is left running or on disk.
func Start(ctx context.Context, dir string, n int) (*Ensemble, error) {
	java, jar, err := Path()
	if err != nil {
		return nil, fmt.Errorf("start zookeeper: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("start zookeeper: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, zkStartCap)
	defer cancel()
	for trial := 1; ; trial++ {
		e, err := start(ctx, dir, n, java, jar)
		if errors.Is(err, proc.ErrPortTaken) && trial < proc.PortTrials {
			continue
		}
		return e, err
	}
}

// start is one try of Start.
func start(ctx context.Context, dir string, n int, java, jar string) (_ *Ensemble, err error) {
	e := &Ensemble{}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	// Every server must know every peer's ports before any starts.
	var peers []string
	for i := range n {
		name := fmt.Sprintf("z%d", i+1)
		s := &Server{Member: proc.NewMember("zookeeper server", name, filepath.Join(dir, name), zkLogName),
			id: i + 1, java: java, jar: jar, clock: proc.NewClock(filepath.Join(dir, name, zkClockName))}
		e.servers = append(e.servers, s)
		for _, p := range []*int{&s.clientPort, &s.quorumPort, &s.electionPort} {
			if *p, err = network.StablePort(); err != nil {
				return nil, fmt.Errorf("start zookeeper: %w", err)
			}
			s.HoldPort(*p)
		}
		if err := os.MkdirAll(filepath.Join(s.Dir(), "data"), 0o700); err != nil {
			return nil, fmt.Errorf("start zookeeper: %w", err)
		}
		peers = append(peers, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", s.id, s.quorumPort, s.electionPort))
	}
	for _, s := range e.servers {
		if err := s.writeConfig(peers); err != nil {
			return nil, err
		}
		if err := s.spawn(); err != nil {
			return nil, err
		}
	}
	e.admin, _, err = zk.Connect(e.Endpoints(), 10*time.Second, zk.WithLogger(quietZK{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("start zookeeper: admin session: %w", err)
	}
	if err := e.waitLeader(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// quietZK drops the client library's log: it logs every connection a
// fault breaks, and the harness sees the errors all the same.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// waitLeader polls until one server leads a quorum, or a server exits, or
// ctx ends; the error then carries the servers' log tails.
func (e *Ensemble) waitLeader(ctx context.Context) error {
	err := backendkit.PollEvery(ctx, zkPoll, "zookeeper leader", func(ctx context.Context) (string, error) {
		for _, s := range e.servers {
			if !s.Running() {
				if strings.Contains(proc.LogTail(s.LogPath(), 0, zkBindTailLines), "Address already in use") {
					return "", fmt.Errorf("zookeeper server %s exited: %w", s.Name(), proc.ErrPortTaken)
				}
				return "", fmt.Errorf("zookeeper server %s exited", s.Name())
			}
		}
		if _, _, err := ensemble.Leader(ctx, e); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err == nil {
		return nil
	}
	var tails []string
	for _, s := range e.servers {
		tails = append(tails, s.Name()+":\n"+proc.LogTail(s.LogPath(), 0, logTailLines))
	}
	return fmt.Errorf("start zookeeper: %w; log tails:\n%s", err, strings.Join(tails, "\n"))
}

// Nodes are the servers as cluster nodes.
func (e *Ensemble) Nodes() []cluster.Node { return cluster.NodesOf(e.servers) }

// Endpoints are the servers' client addresses.
func (e *Ensemble) Endpoints() []string { return cluster.Addrs(e.servers) }

// Admin is a session with the ensemble, past any link.
func (e *Ensemble) Admin() *zk.Conn { return e.admin }

// Stop closes Admin, kills every server and removes their files.
func (e *Ensemble) Stop() error {
	e.once.Do(func() {
		if e.admin != nil {
			e.admin.Close()
		}
		var errs []error
		for _, s := range e.servers {
			errs = append(errs, s.Stop())
		}
		e.err = errors.Join(errs...)
	})
	return e.err
}

// Server is one ZooKeeper JVM of an Ensemble: a cluster.Node (the
// Ensemble's Admin is its session). Its methods may be called from several goroutines.
type Server struct {
	// Its directory holds zoo.cfg, the data directory and the log.
	*proc.Member
	id           int // its myid
	java, jar    string
	clientPort   int
	quorumPort   int
	electionPort int
	// clock is the JVM's wall clock, which JumpClock moves (libfaketime).
	clock *proc.Clock
}

// writeConfig writes the server's zoo.cfg and myid for an ensemble of
// peers, with the settings of both backends (backendkit.ZooKeeperConfig).
func (s *Server) writeConfig(peers []string) error {
	data := filepath.Join(s.Dir(), "data")
	cfg := backendkit.ZooKeeperConfig(data, "127.0.0.1", s.clientPort, peers)
	if err := os.WriteFile(filepath.Join(s.Dir(), "zoo.cfg"), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("start zookeeper server %s: %w", s.Name(), err)
	}
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(s.id)+"\n"), 0o600); err != nil {
		return fmt.Errorf("start zookeeper server %s: %w", s.Name(), err)
	}
	return nil
}

// jvmArgs start QuorumPeerMain as both backends do
// (backendkit.ZooKeeperJVMArgs), with the logger's jar where present.
func (s *Server) jvmArgs() []string {
	cp := s.jar
	if _, err := os.Stat(zkLoggerJar); err == nil {
		cp += string(os.PathListSeparator) + zkLoggerJar
	}
	return backendkit.ZooKeeperJVMArgs(cp, filepath.Join(s.Dir(), "zoo.cfg"))
}

// spawn starts the server's JVM; it does not wait for it to serve, since a
// server alone cannot: it waits for a quorum of its peers.
func (s *Server) spawn() error {
	env, err := s.clock.Env()
	if err != nil {
		return fmt.Errorf("start zookeeper server %s: %w", s.Name(), err)
	}
	if env != nil {
		env = append(os.Environ(), env...)
	}
	if _, err = s.Spawn(env, s.java, s.jvmArgs()...); err != nil {
		return err
	}
	s.clock.Watch(s.Process())
	return nil
}

// Addr is the server's client address; it stays the same across restarts.
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.clientPort))
}

// Restart starts the server again on the same ports, with the data it had
// on disk or without (it then takes a snapshot from the leader as it
// rejoins), and returns once it serves as leader or follower.
func (s *Server) Restart(ctx context.Context, keepData bool) error {
	return s.Member.Restart(func() error {
		if !keepData {
			// myid stays: it names the server in the ensemble.
			if err := os.RemoveAll(filepath.Join(s.Dir(), "data", "version-2")); err != nil {
				return fmt.Errorf("restart zookeeper server %s: %w", s.Name(), err)
			}
		}
		if err := s.spawn(); err != nil {
			return err
		}
		return s.awaitRejoin(ctx)
	})
}

// awaitRejoin polls until the server serves as leader or follower.
func (s *Server) awaitRejoin(ctx context.Context) error {
	return backendkit.PollEvery(ctx, zkPoll, "zookeeper server "+s.Name()+" rejoins", func(ctx context.Context) (string, error) {
		if s.Process().Exited() {
			return "", fmt.Errorf("exited; log tail:\n%s", proc.LogTail(s.LogPath(), 0, logTailLines))
		}
		mode, err := ensemble.Mode(ctx, s.Addr())
		if err != nil {
			return err.Error(), nil
		}
		if mode != "leader" && mode != "follower" {
			return "mode " + mode, nil
		}
		return "", nil
	})
}

// JumpClock moves the server's wall clock forward by d, for good (a restart
// keeps it): libfaketime, preloaded into its JVM, reads the offset from a
// file at every reading of the wall clock (System.currentTimeMillis), and
// leaves the monotonic clock (System.nanoTime) alone, as a clock stepped by
// NTP does. Without libfaketime it says so.
func (s *Server) JumpClock(d time.Duration) error {
	if err := s.clock.Jump(d); err != nil {
		return fmt.Errorf("jump the clock of zookeeper server %s: %w", s.Name(), err)
	}
	return nil
}

// logTailLines is how many lines of a server's log an error quotes.
const logTailLines = 10
