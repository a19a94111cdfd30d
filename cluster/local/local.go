// Package local is the cluster backend that runs every server as a process
// of this machine on 127.0.0.1: redis-server for the data nodes, the
// Sentinels and the inventory, mariadbd for the SQL inventory, postgres for the
// postgres topology's lock table. It is what the
// harness and the CLI use unless told otherwise: the fastest to start, the
// one every fault works on, and it needs only the binaries `make deps`
// installs.
package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/cluster"
)

// Local runs every server as a process of this machine on 127.0.0.1.
type Local struct {
	// Server is the redis-server binary; "" means RedisServerPath().
	Server string
}

// Name is "local".
func (Local) Name() string { return "local" }

// Ready finds redis-server; a missing MariaDB skips only the runs that need it.
func (Local) Ready(context.Context, bool) error {
	_, err := RedisServerPath()
	return err
}

// StartRun finds redis-server, unless Server names it; the run's servers
// are processes of this machine, which share nothing to set up.
func (l Local) StartRun(context.Context) (cluster.RunSession, error) {
	if l.Server == "" {
		server, err := RedisServerPath()
		if err != nil {
			return nil, err
		}
		l.Server = server
	}
	return session(l), nil
}

// session is the RunSession of the local backend, with Server found.
type session Local

// Name is "local".
func (session) Name() string { return "local" }

// Close does nothing: each server's Stop removes what it left.
func (session) Close() error { return nil }

// StartNode starts a redis-server process.
func (l session) StartNode(ctx context.Context, cfg cluster.NodeConfig) (cluster.Node, error) {
	if cfg.After != nil {
		if err := cfg.After(ctx); err != nil {
			return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
		}
	}
	if cfg.Server == "" {
		cfg.Server = l.Server
	}
	if cfg.Sentinel != "" {
		if cfg.Server == "" {
			server, err := RedisServerPath()
			if err != nil {
				return nil, fmt.Errorf("start node %s: %w", cfg.Name, err)
			}
			cfg.Server = server
		}
		script, err := writeSentinelScript(filepath.Join(cfg.Dir, cfg.Name+"-"+sentinelScriptName), cfg.Server, cfg.Sentinel)
		if err != nil {
			return nil, err
		}
		cfg.Server = script
		p, err := StartProcess(ctx, cfg)
		if err != nil {
			os.Remove(script)
			return nil, err
		}
		return sentinelProcess{p, script}, nil
	}
	p, err := StartProcess(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// StartMariaDB starts a mariadbd process.
func (session) StartMariaDB(ctx context.Context, dir string) (cluster.Database, error) {
	m, err := StartMariaDB(ctx, dir)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// StartPostgres starts a PostgreSQL server as processes of this machine.
func (session) StartPostgres(ctx context.Context, dir string) (cluster.Database, error) {
	p, err := StartPostgres(ctx, dir)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// The files of a Sentinel started by the local backend: the script it runs
// instead of redis-server, and the config file the script writes.
const (
	sentinelScriptName = "sentinel.sh"
	sentinelConfName   = "sentinel.conf"
)

// writeSentinelScript writes to path the script a Sentinel node runs instead
// of redis-server, with conf as its config. A Sentinel refuses to start without a config file, which
// redis-server takes only as its first argument, before the ones every node
// gets; and it rewrites that file, so each Sentinel needs its own, in its own
// directory. The script, run in the node's directory, writes the file there
// on the first start (a restart without data writes it afresh) and execs
// redis-server, which keeps its pid.
func writeSentinelScript(path, server, conf string) (string, error) {
	script := fmt.Sprintf("#!/bin/sh\n# Written by locklab: starts a Sentinel with a config file of its own.\n"+
		"[ -f %[1]s ] || cat > %[1]s <<'EOF'\n%[2]s\nEOF\nexec %[3]s %[1]s --sentinel \"$@\"\n",
		sentinelConfName, conf, shellQuote(server))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", fmt.Errorf("sentinel script: %w", err)
	}
	_, err = f.WriteString(script)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("sentinel script: %w", err)
	}
	return path, nil
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sentinelProcess is a Sentinel started through its script, which Stop removes.
type sentinelProcess struct {
	*Process
	script string
}

// Stop stops the Sentinel and removes its script.
func (s sentinelProcess) Stop() error {
	err := s.Process.Stop()
	if rerr := os.Remove(s.script); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}
