// Package memcached is locklab's memcached lock service, the other cache
// applications lock on: a lock is an item added with an expiry (`add`),
// released by a delete guarded by the item's CAS id, as the cache locks of
// many PHP and Python frameworks are. It is the first service that plugs
// in through the seam alone: Service starts a deployment on any backend
// (cluster.LockService) and dials each client's handle (harness.Dialer);
// no other package of locklab names memcached's client library.
//
// What sets memcached apart, and its pitfalls (pitfalls/memcached.go):
// it keeps nothing on disk, so a restart loses every lock; it evicts the
// least recently used items when its memory is full, a held lock's
// included (Evict); and it counts expiry in whole seconds of its own
// clock, which ticks once a second, so an item added with an expiry of
// one second lives anywhere from a moment to that second.
package memcached

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/cluster"
)

// Memory is the server's memory for items, in megabytes (memcached -m):
// little, so that a writer can fill it and make the server evict a held
// lock within a fraction of a lease (Evict).
const Memory = 2

// ErrNoMemcached means a run on the memcached topology could not start
// memcached: it is not installed, or the backend cannot run it. A suite
// skips such a run, as one that lacks redis-server.
var ErrNoMemcached = errors.New("memcached not available")

// Service is the memcached lock service: one server, the lock node.
type Service struct{}

// Pace is the lease and run length of explore's schedules on memcached
// (service.Paced): the shortest lease a correct memcached lock can ask for
// (MinLease: the server counts expiry in whole seconds of a clock that
// ticks once a second), and a run of three leases.
func (Service) Pace() (ttl, runFor time.Duration) { return MinLease, 3 * MinLease }

// Name is cluster.Memcached.
func (Service) Name() cluster.Service { return cluster.Memcached }

// Start starts one memcached server on run, with Memory megabytes for
// items and one worker thread, its clock one that can jump
// (cluster.ServerSpec.Clock): memcached counts expiry by a tick it reads
// from CLOCK_MONOTONIC (memcached.c, clock_handler), which libfaketime
// moves on local processes. The docker image has no libfaketime: there
// the jump is refused and its run unknown (fault.ClockJumpServer).
func (Service) Start(ctx context.Context, run cluster.RunSession, dir string) (cluster.Deployment, error) {
	node, err := cluster.StartServer(ctx, run, cluster.ServerSpec{
		Name: "m1", Dir: dir, Program: "memcached", Missing: ErrNoMemcached, Clock: true,
		Args: func(host string, port int) []string {
			// -u root: memcached refuses to run as root without it, and
			// locklab's containers and CI run as root. -U 0: no UDP.
			return []string{"-u", "root", "-l", host, "-p", strconv.Itoa(port), "-U", "0",
				"-m", strconv.Itoa(Memory), "-t", "1"}
		},
		Ready: func(ctx context.Context, addr string) error {
			_, err := Ask(ctx, addr, "version")
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return &deployment{node: node}, nil
}

// deployment is a running memcached server.
type deployment struct{ node cluster.Node }

// Nodes is the one server.
func (d *deployment) Nodes() []cluster.Node { return []cluster.Node{d.node} }

// Stop stops the server.
func (d *deployment) Stop() error { return d.node.Stop() }

// LockState reads the lock's item without bumping it in the LRU (meta get
// with u): its time left in whole seconds, the server's unit.
func (d *deployment) LockState(ctx context.Context, key string) (cluster.State, error) {
	reply, err := Ask(ctx, d.node.Addr(), "mg "+key+" t u")
	if err != nil {
		return cluster.Free, fmt.Errorf("read the lock's item: %w", err)
	}
	return stateOf(reply)
}

// stateOf reads a meta get's reply: "EN" (no item) or "HD t<seconds>",
// -1 seconds for an item that never expires.
func stateOf(reply string) (cluster.State, error) {
	fields := strings.Fields(reply)
	switch {
	case len(fields) > 0 && fields[0] == "EN":
		return cluster.Free, nil
	case len(fields) < 2 || fields[0] != "HD" || !strings.HasPrefix(fields[1], "t"):
		return cluster.Free, fmt.Errorf("unexpected reply %q", reply)
	}
	secs, err := strconv.Atoi(fields[1][1:])
	if err != nil {
		return cluster.Free, fmt.Errorf("unexpected reply %q", reply)
	}
	if secs < 0 {
		return cluster.Unexpiring(), nil
	}
	return cluster.Until(time.Duration(secs) * time.Second), nil
}

// Ask sends one command line to the server at addr on a connection of its
// own, past any link, and returns the first line of the reply: how
// locklab itself reads the server.
func Ask(ctx context.Context, addr, line string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	} else {
		conn.SetDeadline(time.Now().Add(time.Second))
	}
	if _, err := conn.Write([]byte(line + "\r\n")); err != nil {
		return "", err
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimRight(reply, "\r\n"), err
}
