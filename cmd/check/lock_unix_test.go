//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestOutInUse: while another check holds the report folder's lock, check
// stops before any run with one line naming the holder's pid; once it is
// free, the lock file holds check's own pid.
func TestOutInUse(t *testing.T) {
	out := t.TempDir()
	f, err := os.OpenFile(filepath.Join(out, ".check.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("4242\n"); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-pitfall", "4", "-out", out}, io.Discard, &stderr)
	want := out + " is in use by another check (pid 4242); wait for it or pick another -out"
	if code != exitUsage || !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want exit %d and one line %q", code, stderr.String(), exitUsage, want)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".check.lock" {
			t.Errorf("check left %s in a folder it did not hold", e.Name())
		}
	}

	// Freed, the folder is check's; stop it at the redis-server check, which
	// comes after the lock.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REDIS_SERVER", "")
	t.Setenv("PATH", t.TempDir())
	stderr.Reset()
	run(context.Background(), []string{"-pitfall", "4", "-out", out}, io.Discard, &stderr)
	if strings.Contains(stderr.String(), "in use") {
		t.Errorf("the freed folder is still in use: %q", stderr.String())
	}
	// The lock is released when run returns, so a check can take it again.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("check did not release the lock: %v", err)
	}
}

// TestLockWritesPid: the holder's pid is in the lock file for the next
// check to name.
func TestLockWritesPid(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, ".check.lock"), []byte("999999999 stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release, err := lockOut(out)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b, err := os.ReadFile(filepath.Join(out, ".check.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), strconv.Itoa(os.Getpid()); got != want {
		t.Errorf("lock file holds %q, want %q", got, want)
	}
	if _, err := lockOut(out); err == nil || !strings.Contains(err.Error(), "(pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("second lock: %v", err)
	}
}
