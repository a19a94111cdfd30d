package cluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestRunDirHelperProcess is not a test: TestRunDirSweptAfterSIGKILL runs
// the test binary as a locklab process that makes a run directory, prints
// its path and waits to be killed.
func TestRunDirHelperProcess(t *testing.T) {
	if os.Getenv("LOCKLAB_RUNDIR_HELPER") != "1" {
		t.Skip("helper process for TestRunDirSweptAfterSIGKILL")
	}
	d, err := NewRunDir()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d.Path()+"/data", make([]byte, 1<<20), 0o644)
	os.Stdout.WriteString(d.Path() + "\n")
	select {}
}

// TestRunDirSweptAfterSIGKILL: a process killed with SIGKILL cannot remove
// its run directory; the next start in another process does, and leaves a
// live process's directory alone.
func TestRunDirSweptAfterSIGKILL(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunDirHelperProcess$")
	cmd.Env = append(os.Environ(), "LOCKLAB_RUNDIR_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	killed := strings.TrimSpace(line)

	live, err := NewRunDir() // the child still lives: its directory stays
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	if _, err := os.Stat(killed); err != nil {
		t.Fatalf("a live process's run directory was swept: %v", err)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(killed); err != nil {
		t.Fatalf("the killed process's directory should still be there before the sweep: %v", err)
	}
	next, err := NewRunDir()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Remove()
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed run's directory %s survived the next start (stat: %v)", killed, err)
	}
	if _, err := os.Stat(live.Path()); err != nil {
		t.Errorf("this process's own run directory was swept: %v", err)
	}
}

// TestRunDirsInParallel: run directories made at once, as parallel runs
// make them, survive each other's sweeps.
func TestRunDirsInParallel(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for range 50 {
				d, err := NewRunDir()
				if err != nil {
					errs <- err
					return
				}
				_, err = os.Stat(filepath.Join(d.Path(), ownerFile))
				d.Remove()
				if err != nil {
					errs <- fmt.Errorf("a run directory was swept under its owner: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
