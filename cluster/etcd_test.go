package cluster

import (
	"context"
	"errors"
	"testing"
)

// noEtcd is a backend whose runs cannot start etcd.
type noEtcd struct{}

func (noEtcd) Name() string                                 { return "stub" }
func (noEtcd) Ready(context.Context, bool) error            { return nil }
func (noEtcd) StartRun(context.Context) (RunSession, error) { return noEtcdRun{}, nil }

// noEtcdRun starts nothing: not etcd, whose absence Start must report as
// such, and no node (the inventory starts beside the topology).
type noEtcdRun struct{ RunSession }

func (noEtcdRun) Name() string { return "stub" }
func (noEtcdRun) Close() error { return nil }
func (noEtcdRun) StartNode(context.Context, NodeConfig) (Node, error) {
	return nil, errors.New("the stub starts no node")
}

// TestEtcdNeedsAStarter: on a backend whose runs cannot start etcd, the
// etcd topology fails at start with ErrNoEtcd, which a suite skips as a
// missing server.
func TestEtcdNeedsAStarter(t *testing.T) {
	_, err := Start(t.Context(), Config{Topology: EtcdTopology, Backend: noEtcd{}})
	if !errors.Is(err, ErrNoEtcd) {
		t.Fatalf("Start = %v, want ErrNoEtcd", err)
	}
}
