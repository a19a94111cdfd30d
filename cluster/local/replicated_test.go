package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/network"
	"github.com/locklab/locklab/service/redis/sentinel"
)

// TestReplicatedClose checks that the replicated topology on local processes
// leaves no process and no file behind once closed.
func TestReplicatedClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run, err := Local{}.StartRun(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := network.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := proxy.Close(); err != nil {
			t.Error(err)
		}
	})
	r, err := sentinel.StartReplicaSet(within(t, 20*time.Second), run, dir, proxy)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, n := range append(r.Nodes(), r.Sentinels()...) {
		p, ok := n.(*Process)
		if s, sentinel := n.(sentinelProcess); sentinel {
			p, ok = s.Process, true
		}
		if !ok {
			t.Fatalf("node %s is a %T, not a local process", n.Name(), n)
		}
		pids = append(pids, p.Process().Pid)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d after Close: kill -0 = %v, want ESRCH", pid, err)
		}
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("Close left %s", filepath.Join(dir, e.Name()))
	}
}
