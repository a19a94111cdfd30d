package docker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
)

const (
	// dockerServerPort is where a server started from its ServerSpec
	// listens inside its container. Each container has a network of its
	// own, so one port serves any program; it is published on a free
	// port of 127.0.0.1.
	dockerServerPort = 7001
	// dockerServerStartCap bounds a server's start, from its container's
	// start to serving, and again from each restart: the servers started
	// so (memcached) serve within milliseconds, and one that exits at once
	// is reported by this cap, with its log.
	dockerServerStartCap = 15 * time.Second
)

// StartServer starts spec's server in a container of its own, of the
// image locklab/<program> that docker/build.sh builds from this machine's
// program (the newest of this revision), and returns once spec.Ready says
// it serves at its published port. The server runs under locklab-init, as
// an etcd member does: a kill is its SIGKILL inside the container, and a
// restart starts it again there, each in milliseconds, at the same
// address. spec.Args are asked once, for the container's command line: a
// restart runs the same command, on the same port. Without the image it
// says so in one line wrapping spec.Missing, so that the run is skipped.
func (r *dockerRun) StartServer(ctx context.Context, spec cluster.ServerSpec) (cluster.Node, error) {
	if spec.Name == "" || strings.ContainsAny(spec.Name, "/: \t") {
		return nil, fmt.Errorf("start server %q: name must be a non-empty word", spec.Name)
	}
	program := filepath.Base(spec.Program)
	image, err := r.docker.image(r.pool, "", "locklab/"+program)
	if err != nil {
		// make docker installs the program (make deps) and builds its image.
		return nil, fmt.Errorf("%w on the docker backend: %w", spec.Missing, err)
	}
	n := &dockerNode{run: r, name: spec.Name, image: image, port: dockerServerPort, supervised: true,
		// The server's files, if any, live in the container's own /data
		// (the image's): a restart keeps them, one without data empties
		// it. A server that keeps nothing (memcached) needs no volume.
		noVolume: true}
	n.cmd = append([]string{"-ctl", ":" + strconv.Itoa(dockerInitPort), "-data", dockerDataDir, "--",
		"/usr/bin/" + program}, spec.Args("0.0.0.0", dockerServerPort)...)
	n.ready = func(ctx context.Context) error { return n.awaitServer(ctx, spec) }
	if err := r.createNode(ctx, n); err != nil {
		return nil, fmt.Errorf("start server %s: %w", spec.Name, err)
	}
	if err := n.ready(ctx); err != nil {
		err = fmt.Errorf("start server %s: %w; log tail:\n%s", spec.Name, err, n.logTail())
		return nil, errors.Join(err, n.Stop())
	}
	return asServers(n)[0], nil
}

// awaitServer polls spec.Ready at the node's published port until the
// server serves. Until it listens, the port accepts and closes at once,
// which Ready reports as not yet serving.
func (n *dockerNode) awaitServer(ctx context.Context, spec cluster.ServerSpec) error {
	ctx, cancel := context.WithTimeout(ctx, dockerServerStartCap)
	defer cancel()
	return backendkit.PollUntil(ctx, spec.Name+" serves", func(ctx context.Context) (string, error) {
		if err := spec.Ready(ctx, n.addr); err != nil {
			return err.Error(), nil
		}
		return "", nil
	})
}

// serverNode is a dockerNode that runs no redis-server (memcached, an etcd
// member, a ZooKeeper server): a cluster.Node with no Admin,
// since it has no Redis to administer.
type serverNode struct{ n *dockerNode }

// asServers are ns as the Nodes of servers that run no Redis.
func asServers(ns ...*dockerNode) []cluster.Node {
	nodes := make([]cluster.Node, len(ns))
	for i, n := range ns {
		nodes[i] = serverNode{n}
	}
	return nodes
}

func (s serverNode) Name() string  { return s.n.Name() }
func (s serverNode) Addr() string  { return s.n.Addr() }
func (s serverNode) Running() bool { return s.n.Running() }
func (s serverNode) Kill() error   { return s.n.Kill() }
func (s serverNode) Restart(ctx context.Context, keepData bool) error {
	return s.n.Restart(ctx, keepData)
}
func (s serverNode) Pause() error  { return s.n.Pause() }
func (s serverNode) Resume() error { return s.n.Resume() }
func (s serverNode) Stop() error   { return s.n.Stop() }

// Pid is the node's (cluster.ServerProcess).
func (s serverNode) Pid() int { return s.n.Pid() }

// JumpClock moves the node's wall clock, where its image has libfaketime
// (cluster.ClockJumper: the ZooKeeper image). A server started from a
// ServerSpec with Clock (memcached) runs in an image without libfaketime,
// so its jump is refused with that reason, and fault.ClockJumpServer
// spoils the run (unknown): never an ok for a jump that was not made.
func (s serverNode) JumpClock(d time.Duration) error { return s.n.JumpClock(d) }
