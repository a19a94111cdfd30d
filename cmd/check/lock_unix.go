//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the file in the report folder that one check at a time holds
// an exclusive flock on, with its pid in it.
const lockFile = ".check.lock"

// lockOut takes the report folder out for this process: an exclusive,
// non-blocking flock on out/.check.lock, into which it writes its pid. The
// lock lasts until release is called or the process ends. When another
// check holds it, the error names that check's pid.
func lockOut(out string) (release func(), err error) {
	path := filepath.Join(out, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot lock -out %s: %w", out, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by another check (%s); wait for it or pick another -out", out, holder(f))
		}
		return nil, fmt.Errorf("cannot lock -out %s: %w", out, err)
	}
	// The file is not removed afterwards: another check could have opened
	// it meanwhile and would then lock a file nobody else sees.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

// holder is "pid N" for the check whose pid is in the lock file, or "pid
// unknown" when it has not written it yet.
func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return "pid unknown"
	}
	return "pid " + strconv.Itoa(pid)
}
