package fault_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service/etcd"
)

// spoilClient is a fault.Client that only records why a run was spoiled.
type spoilClient struct{ why []string }

func (c *spoilClient) SetSkew(time.Duration)   {}
func (c *spoilClient) Program() bool           { return false }
func (c *spoilClient) Spoil(why string)        { c.why = append(c.why, why) }
func (c *spoilClient) SQLConnections() []int64 { return nil }

// TestClockJumpServerOnEtcd: an etcd member's wall clock cannot be moved
// (Go reads it past libfaketime), so the jump is not made and the run is
// spoiled with that reason, never taken for a jump that changed nothing.
func TestClockJumpServerOnEtcd(t *testing.T) {
	cl, err := cluster.Start(t.Context(), cluster.Config{Topology: cluster.EtcdTopology, Backend: local.Local{}, Service: etcd.Service{}})
	if errors.Is(err, etcd.ErrNoEtcd) {
		t.Skipf("not tested: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cl.Close(); err != nil {
			t.Error(err)
		}
	}()
	h, err := history.New("")
	if err != nil {
		t.Fatal(err)
	}
	env := fault.NewEnv(cl, h)
	c := &spoilClient{}
	env.AddClient(c, nil)
	heal, err := fault.Apply(t.Context(), env, fault.ClockJumpServer{Node: fault.EveryServer, By: time.Second}, history.Op{Crux: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if len(c.why) != 1 || !strings.Contains(c.why[0], "cannot be moved") {
		t.Errorf("spoiled with %q, want one reason saying the clock cannot be moved", c.why)
	}
}
