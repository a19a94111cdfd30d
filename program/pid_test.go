package program

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
)

// TestProcessPid: a client whose lock is a program names the program's
// process, the shell that runs its command, for the run's lag meter to
// read; a client without one names none.
func TestProcessPid(t *testing.T) {
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Config{Backend: local.Local{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	h, _ := history.New("")
	c, _, err := harness.Join(ctx, cl, harness.ClientOptions{ID: 0, TTL: 300 * time.Millisecond, Timeout: time.Second}, h, failpoint.NewSet(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if pid := c.ProcessPid(); pid != 0 {
		t.Fatalf("ProcessPid %d before any program was attached", pid)
	}
	l := New("sleep 60")(c).(*Lock)
	if l.err != nil {
		t.Fatal(l.err)
	}
	pid := c.ProcessPid()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if pid <= 0 || err != nil || !strings.Contains(string(cmdline), "sleep 60") {
		t.Errorf("ProcessPid %d runs %q (%v), want the program's shell", pid, cmdline, err)
	}
}
