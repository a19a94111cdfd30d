package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Run directories live in the system's temp folder under this prefix.
const runDirPrefix = "locklab-"

// ownerFile is locked (flock) by the process that owns a run directory for
// as long as it lives; the kernel drops the lock when the process dies, even
// by SIGKILL.
const ownerFile = ".owner"

// orphanAge is how old a run directory without an owner file must be before
// a sweep takes it for a leftover: younger ones may be being made right now.
const orphanAge = time.Minute

// RunDir is the temporary directory of one run: node data, logs, MariaDB.
// A process killed with SIGKILL cannot remove it; the next NewRunDir, in any
// locklab process, does.
type RunDir struct {
	path  string
	owner *os.File
}

// NewRunDir removes the run directories that killed processes left behind
// and makes a fresh one, owned by this process.
func NewRunDir() (*RunDir, error) {
	SweepRunDirs()
	path, err := os.MkdirTemp("", runDirPrefix)
	if err != nil {
		return nil, err
	}
	// The owner file is locked under another name first and only then
	// renamed: a sweep in another goroutine or process that found it
	// unlocked between its creation and its lock would take the new
	// directory for a leftover and remove it under its owner.
	f, err := os.OpenFile(filepath.Join(path, ownerFile+".new"), os.O_CREATE|os.O_RDWR, 0o644)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(path, ownerFile))
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.RemoveAll(path)
		return nil, fmt.Errorf("own run directory: %w", err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return &RunDir{path: path, owner: f}, nil
}

// Path is the directory.
func (d *RunDir) Path() string { return d.path }

// Remove deletes the directory; it may be called twice.
func (d *RunDir) Remove() error {
	if d == nil || d.owner == nil {
		return nil
	}
	d.owner.Close()
	d.owner = nil
	return os.RemoveAll(d.path)
}

// SweepRunDirs removes the run directories whose owner is gone, and reports
// how many it removed.
func SweepRunDirs() int {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), runDirPrefix+"*"))
	removed := 0
	for _, dir := range dirs {
		if orphaned(dir) && os.RemoveAll(dir) == nil {
			removed++
		}
	}
	return removed
}

// orphaned reports whether no live process owns dir.
func orphaned(dir string) bool {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Made by a locklab without owner files, or being made right now.
		return time.Since(info.ModTime()) > orphanAge
	}
	if err != nil {
		return false
	}
	defer f.Close()
	// Taking the lock proves its owner is gone; closing f drops it again.
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
