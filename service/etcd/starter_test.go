package etcd_test

import (
	"context"
	"errors"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/etcd"
)

// bare is a backend whose runs cannot start etcd.
type bare struct{}

func (bare) Name() string                                         { return "stub" }
func (bare) Ready(context.Context, bool) error                    { return nil }
func (bare) StartRun(context.Context) (cluster.RunSession, error) { return bareRun{}, nil }

// bareRun starts nothing: not etcd, whose absence Start must report as
// such, and no node (the inventory starts beside the topology).
type bareRun struct{ cluster.RunSession }

func (bareRun) Name() string { return "stub" }
func (bareRun) Close() error { return nil }
func (bareRun) StartNode(context.Context, cluster.NodeConfig) (cluster.Node, error) {
	return nil, errors.New("the stub starts no node")
}

// TestNeedsAStarter: on a backend whose runs cannot start etcd, the etcd
// topology fails at start with ErrNoEtcd, which a suite skips as a
// missing server.
func TestNeedsAStarter(t *testing.T) {
	_, err := cluster.Start(t.Context(), cluster.Config{Topology: cluster.EtcdTopology, Backend: bare{}, Service: etcd.Service{}})
	if !errors.Is(err, etcd.ErrNoEtcd) {
		t.Fatalf("Start = %v, want ErrNoEtcd", err)
	}
}

// TestRelayed: a lock program on etcd is relayed: its LOCKLAB_ETCD names
// addresses a relay reads (program's TestEtcdRelay strikes them).
func TestRelayed(t *testing.T) {
	if why := (harness.Endpoints{Env: []string{"LOCKLAB_ETCD=127.0.0.1:1,127.0.0.1:2", "LOCKLAB_SESSION_MS=1000"}}).Unrelayed(); why != "" {
		t.Errorf("a program on etcd is unrelayed: %q", why)
	}
}
