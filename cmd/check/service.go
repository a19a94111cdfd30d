package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/locks"
)

// serviceUsage is the -service flag's help, for check and check explore.
func serviceUsage() string {
	return "with -lock: every topology of this lock service (" + serviceList() + "); a lock program names the service it is written for this way"
}

// serviceList names every lock service, for help and errors.
func serviceList() string {
	var names []string
	for _, s := range cluster.Services() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}

// where is what -topology and -service say about where a lock runs.
type where struct {
	topology, service           string
	topologyGiven, serviceGiven bool
}

// lockOn finds the lock -lock names and the topologies w picks of those
// it runs on: the one -topology names, every one of -service's, or, with
// neither, every one it supports (a lock program: single, the first).
func lockOn(name string, w where) (locks.Lock, []cluster.Topology, error) {
	if !w.serviceGiven {
		return lockTopologies(name, w.topology, w.topologyGiven)
	}
	if w.topologyGiven {
		return locks.Lock{}, nil, errors.New("give -service or -topology, not both")
	}
	s := cluster.Service(w.service)
	all := cluster.TopologiesOf(s)
	if len(all) == 0 {
		return locks.Lock{}, nil, fmt.Errorf("unknown service %q; the services are %s", w.service, serviceList())
	}
	if strings.TrimSpace(name) == "" {
		return locks.Lock{}, nil, errors.New("-lock names no lock (see check list)")
	}
	l, err := locks.Lookup(name)
	if err != nil {
		return locks.Lock{}, nil, err
	}
	var ts []cluster.Topology
	for _, t := range all {
		if l.Supports(t) {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return locks.Lock{}, nil, fmt.Errorf("lock %s runs on %s, not on service %s (%s)", l.Name, topologyList(l.Topologies), s, topologyList(all))
	}
	return l, ts, nil
}

// topologyNames names every topology, for help.
func topologyNames() string {
	var names []string
	for _, t := range cluster.Topologies() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
