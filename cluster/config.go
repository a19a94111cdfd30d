package cluster

import (
	"context"
	"strconv"
)

// Persistence says what a node keeps on disk, so a restart can keep or lose its data.
// Kill is a process crash, not a power loss: what redis-server has written survives in
// the page cache even when it was never fsynced, so to lose it restart with keepData=false.
type Persistence int

const (
	// NoPersistence turns off snapshots and the AOF: a kill loses everything, except
	// that a replica keeps the RDB file of its last full sync and a restart loads it.
	NoPersistence Persistence = iota
	// AOFEverySec appends every write to the AOF and fsyncs once a second.
	AOFEverySec
	// AOFAlways appends and fsyncs every write before replying.
	AOFAlways
)

// String returns a short name for p, as used in test and scenario names.
func (p Persistence) String() string {
	switch p {
	case NoPersistence:
		return "none"
	case AOFEverySec:
		return "aof-everysec"
	case AOFAlways:
		return "aof-always"
	}
	return "Persistence(" + strconv.Itoa(int(p)) + ")"
}

// NodeConfig describes one redis-server node, a data node or a Sentinel,
// whichever backend runs it.
type NodeConfig struct {
	Name        string      // e.g. "n1", "inventory"; used in logs and errors
	Dir         string      // parent directory; the node makes and owns Dir/Name
	Port        int         // 0 picks a free loopback port
	Persistence Persistence // what the node keeps on disk across a restart
	Args        []string    // extra redis-server arguments, e.g. "--replicaof", "127.0.0.1", "7001"
	Server      string      // local backend: the redis-server binary; "" means local.RedisServerPath()
	// Sentinel, when set, is the config file of a Sentinel: the node runs
	// as one (redis-server --sentinel) instead of as a data node.
	Sentinel string
	// Peers are the data nodes this one replicates with, itself included,
	// for a Networked backend, which gives each pair a path of its own.
	// Local processes ignore it.
	Peers []string
	// After, when set, is awaited before the server starts, and the start
	// fails with its error: a replica or a Sentinel waits for its master. A
	// backend may prepare the node meanwhile, as docker makes its container.
	After func(ctx context.Context) error
}

// ServerArgs returns the redis-server arguments of the node that do not
// change across restarts, whichever backend runs it; a backend adds where it
// listens.
func (cfg NodeConfig) ServerArgs() []string {
	args := []string{
		"--daemonize", "no",
		"--protected-mode", "no",
		"--save", "",
		"--logfile", "", // stdout, which start sends to the node's log
	}
	switch cfg.Persistence {
	case AOFEverySec:
		args = append(args, "--appendonly", "yes", "--appendfsync", "everysec")
	case AOFAlways:
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	default:
		args = append(args, "--appendonly", "no")
	}
	return append(args, cfg.Args...)
}
