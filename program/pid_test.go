package program

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
)

// TestProcessPid: a client whose lock is a program names the program's
// process, the shell that runs its command, for the run's lag meter to
// read; a client without one names none.
func TestProcessPid(t *testing.T) {
	_, c, _ := joinTopology(t, cluster.Single, 0, time.Second)
	if pid := c.ProcessPid(); pid != 0 {
		t.Fatalf("ProcessPid %d before any program was attached", pid)
	}
	l := New("sleep 60")(c).(*Lock)
	if l.err != nil {
		t.Fatal(l.err)
	}
	pid := c.ProcessPid()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	// While the shell execs sleep its cmdline reads empty for a moment
	// (the new image's arguments are not yet in place): read again until
	// it says something, or the process is gone.
	for deadline := time.Now().Add(5 * time.Second); err == nil && len(cmdline) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		cmdline, err = os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	}
	// The shell may have exec'd sleep already: "sleep\x0060".
	if pid <= 0 || err != nil || !strings.Contains(string(cmdline), "sleep") {
		t.Errorf("ProcessPid %d runs %q (%v), want the program's shell", pid, cmdline, err)
	}
}
