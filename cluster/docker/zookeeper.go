package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/service/zookeeper/ensemble"
)

const (
	dockerZooKeeperRepo         = "locklab/zookeeper"
	dockerZooKeeperClientPort   = 2181
	dockerZooKeeperQuorumPort   = 2888
	dockerZooKeeperElectionPort = 3888
	// The server's zoo.cfg, and the myid that locklab-init copies into the
	// data directory before each start where it is missing: a restart
	// without data keeps the server's place in the ensemble.
	dockerZooKeeperConf = "/etc/locklab-zoo.cfg"
	dockerZooKeeperMyID = "/etc/locklab-myid"
	// The server's jar and the logger's, where the image has them
	// (docker/build.sh copies Debian's /usr/share/java).
	dockerZooKeeperClassPath = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"
	// libfaketime in the image (docker/build.sh), where it was installed,
	// and its timestamp file, outside the data directory that a wipe
	// empties (JumpClock).
	dockerFaketimeLib   = "/usr/lib/locklab/libfaketime.so.1"
	dockerFaketimeClock = "/tmp/locklab-clock"
	// dockerZooKeeperStartCap bounds the start of an ensemble, from nothing
	// to a leader, as on local processes: three JVMs on two shared cores.
	dockerZooKeeperStartCap = 60 * time.Second
	// dockerZooKeeperPoll is how often a start or a restart asks the
	// servers for their mode: each ask is a connection to a JVM.
	dockerZooKeeperPoll = 50 * time.Millisecond
)

// StartZooKeeper starts a ZooKeeper ensemble of n servers, each a JVM in a
// container of its own under locklab-init, which kills and restarts it in
// place as it does redis-server. The servers reach each other by name on
// the run's network; clients reach each through its published port.
// Without the image it says so in one line wrapping ensemble.ErrNoZooKeeper,
// so that the run is skipped.
func (r *dockerRun) StartZooKeeper(ctx context.Context, _ string, n int) (_ ensemble.Set, err error) {
	image, err := r.docker.image(r.pool, r.docker.ZooKeeperImage, dockerZooKeeperRepo)
	if err != nil {
		return nil, fmt.Errorf("%w on the docker backend: %v", ensemble.ErrNoZooKeeper, err)
	}
	ctx, cancel := context.WithTimeout(ctx, dockerZooKeeperStartCap)
	defer cancel()
	set := &dockerZooKeeper{}
	defer func() {
		if err != nil {
			err = errors.Join(err, set.Stop())
		}
	}()
	var peers []string
	for i := range n {
		name := fmt.Sprintf("z%d", i+1)
		peers = append(peers, fmt.Sprintf("server.%d=%s:%d:%d", i+1, name, dockerZooKeeperQuorumPort, dockerZooKeeperElectionPort))
	}
	cfg := backendkit.ZooKeeperConfig(dockerDataDir, "0.0.0.0", dockerZooKeeperClientPort, peers)
	set.servers, err = startAll(n, func(i int) (*dockerNode, error) {
		return r.zooKeeperServer(ctx, i+1, image, cfg)
	})
	if err != nil {
		return nil, err
	}
	set.admin, _, err = zk.Connect(set.Endpoints(), 10*time.Second, zk.WithLogger(quietZK{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("start zookeeper: admin session: %w", err)
	}
	for _, s := range set.servers {
		s.ready = func(ctx context.Context) error { return awaitZooKeeperServer(ctx, s.Addr()) }
	}
	err = backendkit.PollEvery(ctx, dockerZooKeeperPoll, "zookeeper leader", func(ctx context.Context) (string, error) {
		if _, _, err := ensemble.Leader(ctx, set); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
	if err != nil {
		return nil, fmt.Errorf("start zookeeper: %w; log tails:\n%s", err, logTails(set.servers))
	}
	return set, nil
}

// zooKeeperServer creates the container of server id (named "z<id>") with
// the ensemble's config cfg; it does not wait for it to serve, since a
// server alone cannot: it waits for a quorum.
func (r *dockerRun) zooKeeperServer(ctx context.Context, id int, image, cfg string) (*dockerNode, error) {
	name := "z" + strconv.Itoa(id)
	s := &dockerNode{run: r, name: name, image: image, port: dockerZooKeeperClientPort, supervised: true}
	s.files = map[string]string{dockerZooKeeperConf: cfg, dockerZooKeeperMyID: strconv.Itoa(id) + "\n",
		dockerFaketimeClock: faketimeOffset(0)}
	// The monotonic clock not faked, as a stepped clock leaves it; the
	// monotonic fix off, without which libfaketime 0.9.10 makes a Java 17
	// JVM spin (libfaketime#425). An image without the library starts the
	// JVM all the same (ld.so ignores it), and a jump then proves nothing
	// (fault.ClockJumpServer checks it).
	s.env = []string{"LD_PRELOAD=" + dockerFaketimeLib, "FAKETIME_TIMESTAMP_FILE=" + dockerFaketimeClock,
		"FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_FORCE_MONOTONIC_FIX=0"}
	s.clock = dockerFaketimeClock
	s.cmd = append([]string{"-ctl", ":" + strconv.Itoa(dockerInitPort), "-data", dockerDataDir,
		"-seed", dockerZooKeeperMyID + ":" + dockerDataDir + "/myid", "--", "/usr/bin/java"},
		backendkit.ZooKeeperJVMArgs(dockerZooKeeperClassPath, dockerZooKeeperConf)...)
	if err := r.createNode(ctx, s); err != nil {
		return nil, fmt.Errorf("start zookeeper server %s: %w", name, err)
	}
	return s, nil
}

// awaitZooKeeperServer polls until the server at addr serves as leader or
// follower: it has rejoined the ensemble.
func awaitZooKeeperServer(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, dockerZooKeeperStartCap)
	defer cancel()
	return backendkit.PollEvery(ctx, dockerZooKeeperPoll, "zookeeper server at "+addr+" rejoins", func(ctx context.Context) (string, error) {
		mode, err := ensemble.Mode(ctx, addr)
		if err != nil {
			return err.Error(), nil
		}
		if mode != "leader" && mode != "follower" {
			return "mode " + mode, nil
		}
		return "", nil
	})
}

// quietZK drops the client library's log: it logs every connection a
// fault breaks, and the harness sees the errors all the same.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// dockerZooKeeper is the ZooKeeper ensemble of a docker run.
type dockerZooKeeper struct {
	servers []*dockerNode
	admin   *zk.Conn
	once    sync.Once
	err     error
}

// Nodes are the servers, each a cluster.Node whose Admin is nil.
func (s *dockerZooKeeper) Nodes() []cluster.Node { return asServers(s.servers...) }

// Endpoints are the servers' published client ports.
func (s *dockerZooKeeper) Endpoints() []string { return cluster.Addrs(s.servers) }

// Admin is a session with the ensemble, past any link.
func (s *dockerZooKeeper) Admin() *zk.Conn { return s.admin }

// Stop closes Admin and removes every server's container.
func (s *dockerZooKeeper) Stop() error {
	s.once.Do(func() {
		if s.admin != nil {
			s.admin.Close()
		}
		var errs []error
		for _, n := range s.servers {
			errs = append(errs, n.Stop())
		}
		s.err = errors.Join(errs...)
	})
	return s.err
}
