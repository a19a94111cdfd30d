package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/network"
)

const (
	nodeLogName      = "redis.log"
	nodeReadyCap     = 5 * time.Second
	nodeReadyPoll    = 5 * time.Millisecond
	nodeLogTailLines = 10
)

// Process is one redis-server process on 127.0.0.1: the local backend's Node.
// Its methods may be called from several goroutines.
type Process struct {
	// Its directory, Dir/Name, holds the node's data files and its log.
	*proc.Member
	server string
	port   int
	addr   string
	args   []string
	admin  *redis.Client
}

// StartProcess starts redis-server as cfg says and returns once it answers PING.
// When it cannot start, the error carries the last lines of its log.
func StartProcess(ctx context.Context, cfg cluster.NodeConfig) (*Process, error) {
	if cfg.Name == "" || cfg.Name != filepath.Base(cfg.Name) || cfg.Name == "." || cfg.Name == ".." {
		return nil, fmt.Errorf("start node %q: name must be a non-empty file name", cfg.Name)
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("start node %s: NodeConfig.Dir is empty", cfg.Name)
	}
	server := cfg.Server
	if server == "" {
		var err error
		if server, err = RedisServerPath(); err != nil {
			return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
		}
	}
	n := &Process{
		Member: proc.NewMember("node", cfg.Name, filepath.Join(cfg.Dir, cfg.Name), nodeLogName),
		server: server,
		args:   append([]string{"--bind", "127.0.0.1"}, cfg.ServerArgs()...),
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
	}
	// Mkdir, not MkdirAll: two nodes sharing a directory would read each other's data.
	if err := os.Mkdir(n.Dir(), 0o755); err != nil {
		return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
	}

	for trial := 1; ; trial++ {
		n.port = cfg.Port
		if n.port == 0 {
			// A restart rebinds the port: keep it out of the ephemeral range.
			port, err := network.StablePort()
			if err != nil {
				os.RemoveAll(n.Dir())
				return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
			}
			n.port = port
		}
		n.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port))
		err := n.start(ctx)
		if err == nil {
			if cfg.Port == 0 {
				n.HoldPort(n.port)
			}
			break
		}
		if cfg.Port == 0 {
			network.ReleasePort(n.port)
		}
		// A free port can be taken by someone else between our probe and redis-server's bind.
		if cfg.Port == 0 && errors.Is(err, proc.ErrPortTaken) && trial < proc.PortTrials {
			continue
		}
		os.RemoveAll(n.Dir())
		return nil, err
	}
	n.admin = redis.NewClient(&redis.Options{
		Addr: n.addr,
		// Honour the caller's deadline: a paused node never answers.
		ContextTimeoutEnabled: true,
		// Fail fast on a killed node instead of redialling for half a second.
		DialerRetries: 1,
	})
	return n, nil
}

// Addr returns "127.0.0.1:port"; it stays the same across restarts.
func (n *Process) Addr() string { return n.addr }

// Port returns the node's TCP port; it stays the same across restarts.
func (n *Process) Port() int { return n.port }

// Admin returns a direct go-redis client, past any proxy, for the harness's own use
// (setup, PTTL, FLUSHALL). It reconnects by itself after a restart.
func (n *Process) Admin() *redis.Client { return n.admin }

// Restart starts the node again on the same port, killing it first if it still runs.
// With keepData false the node's data files are deleted first, as if its disk were lost.
func (n *Process) Restart(ctx context.Context, keepData bool) error {
	return n.Member.Restart(func() error {
		if !keepData {
			if err := n.removeData(); err != nil {
				return fmt.Errorf("restart node %s: %w", n.Name(), err)
			}
		}
		if err := n.start(ctx); err != nil {
			return err
		}
		// Commands that failed while the node was down may have tripped the pool's dial
		// circuit breaker, which would fail Admin for up to a second after we return.
		if err := backendkit.WaitAdmin(ctx, n.admin); err != nil {
			return fmt.Errorf("restart node %s: admin client: %w", n.Name(), err)
		}
		return nil
	})
}

// Stop kills the node, closes Admin and removes the node's directory.
// It can be called more than once, after Kill, and on a paused node.
func (n *Process) Stop() error {
	err := n.Member.Stop()
	// The server is gone; errors from closing connections to it, or from
	// closing Admin twice, tell nothing.
	_ = n.admin.Close()
	return err
}

// removeData deletes everything in the node's directory except the log, which
// tells the story of every run.
func (n *Process) removeData() error {
	entries, err := os.ReadDir(n.Dir())
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == nodeLogName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(n.Dir(), e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// start runs redis-server once on n.port and waits until it answers PING.
// On failure nothing is left running and the error carries the log tail.
func (n *Process) start(ctx context.Context) error {
	logStart, err := n.Spawn(nil, n.server, append([]string{"--port", strconv.Itoa(n.port), "--dir", n.Dir()}, n.args...)...)
	if err != nil {
		return err
	}
	p := n.Process()
	err = waitNodeReady(ctx, n.addr, p)
	if err == nil {
		return nil
	}
	if kerr := p.Kill(); kerr != nil {
		return errors.Join(err, fmt.Errorf("kill node %s: %w", n.Name(), kerr))
	}
	tail := proc.LogTail(n.LogPath(), logStart, nodeLogTailLines)
	if strings.Contains(tail, "Address already in use") {
		err = fmt.Errorf("%w (%w)", err, proc.ErrPortTaken)
	}
	return fmt.Errorf("start node %s on port %d: %w; log tail:\n%s", n.Name(), n.port, err, tail)
}

// waitNodeReady polls until the server of p answers PING on addr, p exits, or
// ctx or the start-up cap runs out.
func waitNodeReady(ctx context.Context, addr string, p *proc.Process) error {
	ctx, cancel := context.WithTimeout(ctx, nodeReadyCap)
	defer cancel()
	tick := time.NewTicker(nodeReadyPoll)
	defer tick.Stop()
	for {
		if pingNode(ctx, addr, p.Pid) {
			return nil
		}
		select {
		case <-p.Done():
			if p.Err() == nil {
				return errors.New("redis-server exited before answering PING")
			}
			return fmt.Errorf("redis-server exited before answering PING: %w", p.Err())
		case <-ctx.Done():
			return fmt.Errorf("redis-server did not answer PING: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// pingNode reports whether the redis-server with the given pid answers PING on addr.
// It checks the pid because when our server fails to bind, another one may hold
// the port and answer in its place. A fresh connection per call keeps the check
// free of any client library's reconnect back-off.
func pingNode(ctx context.Context, addr string, pid int) bool {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	// PING answers -LOADING until the data set is loaded; INFO answers anyway.
	if _, err := io.WriteString(conn, "PING\r\nINFO server\r\n"); err != nil {
		return false
	}
	r := bufio.NewReader(conn)
	if line, err := r.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		return false
	}
	header, err := r.ReadString('\n') // "$<length>\r\n"
	if err != nil || !strings.HasPrefix(header, "$") {
		return false
	}
	size, err := strconv.Atoi(strings.TrimSpace(header[1:]))
	if err != nil || size < 0 {
		return false
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return false
	}
	return bytes.Contains(body, []byte("\r\nprocess_id:"+strconv.Itoa(pid)+"\r\n"))
}
