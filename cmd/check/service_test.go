package main

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/cluster"
)

// TestLockOn: -service picks every topology of that service the lock runs
// on; a program runs on any, so -service is how its user says which.
func TestLockOn(t *testing.T) {
	tests := []struct {
		lock string
		w    where
		want []cluster.Topology
	}{
		{"exec:cat", where{}, []cluster.Topology{cluster.Single}},
		{"exec:cat", where{service: "etcd", serviceGiven: true}, []cluster.Topology{cluster.EtcdTopology}},
		{"exec:cat", where{service: "redis", serviceGiven: true}, []cluster.Topology{cluster.Single, cluster.Replicated, cluster.Redlock}},
		{"exec:cat", where{topology: "postgres", topologyGiven: true}, []cluster.Topology{cluster.PostgresTopology}},
		{"redsync", where{service: "redis", serviceGiven: true}, []cluster.Topology{cluster.Single, cluster.Redlock}},
		{"row-cleanup", where{service: "postgres", serviceGiven: true}, []cluster.Topology{cluster.PostgresTopology}},
	}
	for _, tt := range tests {
		_, got, err := lockOn(tt.lock, tt.w)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s %+v: %v, %v; want %v", tt.lock, tt.w, got, err, tt.want)
		}
	}
}
