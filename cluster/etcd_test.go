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

// noEtcdRun starts nothing; Start must not ask it for more than it has.
type noEtcdRun struct{ RunSession }

func (noEtcdRun) Name() string { return "stub" }
func (noEtcdRun) Close() error { return nil }

// TestEtcdNeedsAStarter: on a backend whose runs cannot start etcd, the
// etcd topology fails at start with ErrNoEtcd, which a suite skips as a
// missing server.
func TestEtcdNeedsAStarter(t *testing.T) {
	_, err := Start(t.Context(), Config{Topology: EtcdTopology, Backend: noEtcd{}})
	if !errors.Is(err, ErrNoEtcd) {
		t.Fatalf("Start = %v, want ErrNoEtcd", err)
	}
}
