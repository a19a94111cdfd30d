package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Clock is a server's wall clock as libfaketime, preloaded into its
// process, makes it read: the real clock plus an offset, which libfaketime
// reads from a file at every reading of the wall clock, so that a Jump
// reaches the running server at once. The monotonic clock is left alone,
// as a clock stepped by NTP or an operator leaves it, unless the Clock is
// Monotonic. A Clock made where libfaketime is not installed cannot move,
// and says so.
type Clock struct {
	lib, file string
	monotonic bool

	mu    sync.Mutex // serializes the offset's changes and its file's writes
	ahead time.Duration
}

// NewClock is the wall clock of a server whose offset lives in file.
func NewClock(file string) *Clock { return &Clock{lib: Libfaketime(), file: file} }

// NewMonotonicClock is NewClock whose jumps move the server's monotonic
// clock too: for a server that times expiry by a tick it reads from
// CLOCK_MONOTONIC (memcached), that is the clock that must jump.
func NewMonotonicClock(file string) *Clock {
	return &Clock{lib: Libfaketime(), file: file, monotonic: true}
}

// Env is what a server's environment adds to run on c: libfaketime
// preloaded and the offset's file written; nothing where libfaketime is not
// installed.
func (c *Clock) Env() ([]string, error) {
	if c.lib == "" {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write(); err != nil {
		return nil, err
	}
	env := []string{"LD_PRELOAD=" + c.lib, "FAKETIME_TIMESTAMP_FILE=" + c.file, "FAKETIME_NO_CACHE=1"}
	if !c.monotonic {
		// The monotonic clock untouched, and libfaketime's fix of it off,
		// without which libfaketime 0.9.10 makes a Java 17 JVM spin
		// (https://github.com/wolfcw/libfaketime/issues/425).
		env = append(env, "FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_FORCE_MONOTONIC_FIX=0")
	}
	return env, nil
}

// Watch forgets p (Forget) once it has exited, however it ends: stopped,
// killed or crashed.
func (c *Clock) Watch(p *Process) {
	if c.lib == "" || p == nil {
		return
	}
	go func() {
		<-p.Done()
		c.Forget(p.Pid)
	}()
}

// Forget removes what libfaketime 0.9.10 left behind of the process pid,
// once it has exited: a shared memory segment and a semaphore in /dev/shm,
// which a killed process cannot remove, and which would break the next
// process that got its pid.
func (c *Clock) Forget(pid int) {
	if c.lib == "" || pid <= 0 {
		return
	}
	ForgetFaketime(pid)
}

// ForgetFaketime removes what libfaketime 0.9.10 leaves in /dev/shm for
// the process pid, which has exited: its shared memory and semaphore.
func ForgetFaketime(pid int) {
	os.Remove(fmt.Sprintf("/dev/shm/faketime_shm_%d", pid))
	os.Remove(fmt.Sprintf("/dev/shm/sem.faketime_sem_%d", pid))
}

// ErrNoLibfaketime is Jump's error where libfaketime is not installed.
var ErrNoLibfaketime = errors.New("libfaketime is not installed (Debian: apt-get install faketime)")

// Jump moves the clock forward by d, for good: a server restarted on c
// keeps the offset.
func (c *Clock) Jump(d time.Duration) error {
	if c.lib == "" {
		return ErrNoLibfaketime
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ahead += d
	return c.write()
}

// write writes the offset through a rename, so that libfaketime never
// reads a half-written file. Called with c.mu held.
func (c *Clock) write() error {
	if err := os.WriteFile(c.file+".new", []byte(fmt.Sprintf("%+.6f\n", c.ahead.Seconds())), 0o644); err != nil {
		return fmt.Errorf("clock: %w", err)
	}
	if err := os.Rename(c.file+".new", c.file); err != nil {
		return fmt.Errorf("clock: %w", err)
	}
	return nil
}
