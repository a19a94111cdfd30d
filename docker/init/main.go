// Command locklab-init is the first process of the docker backend's Redis
// containers. It runs one server (redis-server, as a data node or a
// Sentinel) as its child and, on a control port, crashes it with SIGKILL,
// wipes its data and starts it again, so that a node's crash and restart take
// milliseconds, as a local process's do, while the container keeps its
// network, its published ports and its volume. docker kill and docker start
// take about 600 ms, more than the catalogue's 300 ms leases, which would
// change what its scenarios show.
//
// Usage:
//
//	locklab-init -ctl :7000 [-data /data] [-seed SRC:DST] [-hold] -- SERVER ARGS...
//
// With -hold, the server waits for the first "start", so that its container,
// most of the cost of a start, can be made while the server it depends on (a
// replica's or a Sentinel's master) is still starting.
//
// The control protocol is one line per connection: "kill" (SIGKILL the
// server's process group and reap it), "start" (start it unless it runs;
// first copy SRC to DST when DST is missing, so a Sentinel gets its config
// file afresh after a wipe), "wipe" (empty the data directory; the server
// must be down), "status". The answer is "ok" and details, or "error" and why.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	ctl := flag.String("ctl", ":7000", "control address")
	data := flag.String("data", "/data", "the server's data directory, which wipe empties")
	seed := flag.String("seed", "", "SRC:DST: copy SRC to DST before a start when DST is missing")
	hold := flag.Bool("hold", false, "start the server at the first start command, not at once")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("locklab-init: no server to run (give it after --)")
	}
	s := &supervisor{argv: flag.Args(), data: *data, seed: *seed, reaped: map[int]bool{}}
	// Before the first child, so that no SIGCHLD is missed.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	go s.reap(sig)
	if !*hold {
		if err := s.start(); err != nil {
			log.Fatal("locklab-init: ", err)
		}
	}
	l, err := net.Listen("tcp", *ctl)
	if err != nil {
		log.Fatal("locklab-init: ", err)
	}
	for {
		conn, err := l.Accept()
		if err != nil {
			log.Fatal("locklab-init: ", err)
		}
		go s.serve(conn)
	}
}

// supervisor runs the server. Its methods may be called from several goroutines.
type supervisor struct {
	argv []string
	data string
	seed string

	mu sync.Mutex // serializes commands

	cmu    sync.Mutex   // guards cur and reaped, which reap also touches
	cur    *child       // the server's last run, nil before the first
	reaped map[int]bool // children reaped before start recorded them
}

// child is one run of the server.
type child struct {
	pid  int
	done chan struct{} // closed once reaped
}

func (c *child) running() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// reap waits for every child, as a first process must, and marks the
// server's run done when it exits.
func (s *supervisor) reap(sig <-chan os.Signal) {
	for range sig {
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
			s.cmu.Lock()
			if s.cur != nil && s.cur.pid == pid {
				close(s.cur.done)
			} else {
				s.reaped[pid] = true
			}
			s.cmu.Unlock()
		}
	}
}

func (s *supervisor) serve(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var reply string
	switch cmd := strings.TrimSpace(line); cmd {
	case "kill":
		err = s.kill()
	case "start":
		if !s.running() {
			err = s.startLocked()
		}
	case "wipe":
		err = s.wipe()
	case "status":
		reply = " down"
		if s.running() {
			reply = " running"
		}
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintf(conn, "error %v\n", err)
		return
	}
	fmt.Fprintf(conn, "ok%s\n", reply)
}

func (s *supervisor) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

// startLocked starts the server in a process group of its own, with s.mu held.
func (s *supervisor) startLocked() error {
	if src, dst, ok := strings.Cut(s.seed, ":"); ok {
		if _, err := os.Stat(dst); errors.Is(err, os.ErrNotExist) {
			content, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			if err := os.WriteFile(dst, content, 0o644); err != nil {
				return err
			}
		}
	}
	p, err := os.StartProcess(s.argv[0], s.argv, &os.ProcAttr{
		Dir:   s.data,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return err
	}
	c := &child{pid: p.Pid, done: make(chan struct{})}
	p.Release() // reap collects it
	s.cmu.Lock()
	if s.reaped[c.pid] {
		delete(s.reaped, c.pid)
		close(c.done)
	}
	s.cur = c
	s.cmu.Unlock()
	return nil
}

// running reports whether the server runs.
func (s *supervisor) running() bool {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.cur != nil && s.cur.running()
}

// kill sends SIGKILL to the server's process group (a child forked for an
// AOF rewrite goes too) and waits until the server is reaped.
func (s *supervisor) kill() error {
	s.cmu.Lock()
	c := s.cur
	s.cmu.Unlock()
	if c == nil || !c.running() {
		return nil
	}
	if err := syscall.Kill(-c.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("server %d not reaped 5 s after SIGKILL", c.pid)
	}
}

// wipe empties the data directory, as a lost disk would.
func (s *supervisor) wipe() error {
	if s.running() {
		return errors.New("the server runs: kill it first")
	}
	entries, err := os.ReadDir(s.data)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.data, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
