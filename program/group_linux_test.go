package program

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestAwaitGroupZombies: a killed program whose shell forked its command
// leaves that command to init to reap, which some inits do only every
// second or two; awaitGroup takes it as ended once it is a zombie, and
// waits while it still runs.
func TestAwaitGroupZombies(t *testing.T) {
	// "; true" keeps the shell from exec'ing sleep: sleep is its child,
	// init's once the shell is gone.
	cmd := exec.Command("/bin/sh", "-c", "sleep 60; true")
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); ; {
		if members, _ := groupMembers(pgid); len(members) == 2 {
			break // the shell and its sleep
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell started no child within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	awaitGroup(pgid, 200*time.Millisecond)
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("awaitGroup returned after %s while the group ran", waited)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	cmd.Wait()
	start = time.Now()
	awaitGroup(pgid, 5*time.Second)
	if waited := time.Since(start); waited > 500*time.Millisecond {
		t.Errorf("awaitGroup waited %s for a killed group", waited.Round(time.Millisecond))
	}
	if members, ok := groupMembers(pgid); !ok || len(members) > 0 && running(members[0]) {
		t.Errorf("group %d still runs %v after SIGKILL (listed: %t)", pgid, members, ok)
	}
}
