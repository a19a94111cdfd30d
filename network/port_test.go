package network

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// holdPortEnv makes the test binary a process that takes a stable port,
// prints it, and holds it until its stdin closes.
const holdPortEnv = "LOCKLAB_TEST_HOLD_PORT"

// TestStablePortSkipsOtherProcesses: a port another process holds is not
// handed out here, though nothing is bound to it (as when that process's
// link is cut), and it is free again once that process has ended.
func TestStablePortSkipsOtherProcesses(t *testing.T) {
	if os.Getenv(holdPortEnv) != "" {
		port, err := StablePort()
		if err != nil {
			fmt.Println("error", err)
			return
		}
		fmt.Println("port", port)
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStablePortSkipsOtherProcesses$")
	cmd.Env = append(os.Environ(), holdPortEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	defer func() {
		if !waited {
			stdin.Close()
			cmd.Wait()
		}
	}()
	port := 0
	for sc := bufio.NewScanner(stdout); port == 0 && sc.Scan(); {
		if _, err := fmt.Sscanf(sc.Text(), "port %d", &port); err != nil {
			t.Logf("holder: %s", sc.Text())
		}
	}
	if port == 0 {
		t.Fatal("the holding process printed no port")
	}

	reserved.Lock()
	took := lockPort(port)
	reserved.Unlock()
	if took {
		t.Fatalf("port %d, held by process %d, was locked here too", port, cmd.Process.Pid)
	}

	stdin.Close()
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("holding process: %v", err)
	}
	reserved.Lock()
	took = lockPort(port)
	if took {
		unlockPort(port)
	}
	reserved.Unlock()
	if !took {
		t.Errorf("port %d is still locked after its holder ended", port)
	}
}
