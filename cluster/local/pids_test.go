package local

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service"
)

// TestServerPids starts topologies of local processes: the lag meter must
// be given the pid of every server (each a redis-server, a Sentinel being
// one too, or postgres), and no longer a killed one's.
func TestServerPids(t *testing.T) {
	for _, tc := range []struct {
		topology cluster.Topology
		servers  int // the lock's servers and the inventory
		comm     string
	}{
		{cluster.Single, 2, "redis-server"},
		{cluster.Replicated, 7, "redis-server"},
		{cluster.PostgresTopology, 2, ""}, // a redis-server inventory beside postgres
	} {
		t.Run(string(tc.topology), func(t *testing.T) {
			c, err := cluster.Start(t.Context(), cluster.Config{Topology: tc.topology, Backend: Local{}, Service: service.LockService(tc.topology)})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Error(err)
				}
			}()
			pids := c.ServerPids()
			if len(pids) != tc.servers || len(slices.Compact(slices.Sorted(slices.Values(pids)))) != tc.servers {
				t.Fatalf("server pids %v, want %d distinct", pids, tc.servers)
			}
			for _, pid := range pids {
				comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				if err != nil || tc.comm != "" && strings.TrimSpace(string(comm)) != tc.comm {
					t.Errorf("server pid %d runs %q (%v), want %s", pid, comm, err, tc.comm)
				}
			}
			if err := c.Inventory().Kill(); err != nil {
				t.Fatal(err)
			}
			if got := c.ServerPids(); len(got) != tc.servers-1 {
				t.Errorf("server pids %v after the inventory's kill, want %d", got, tc.servers-1)
			}
		})
	}
}
