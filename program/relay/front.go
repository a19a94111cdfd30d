package relay

import (
	"fmt"
	"net"
	"sync"
)

// Front is a relay's listeners, one per lock node, on 127.0.0.1: the
// addresses a lock program is given. They outlive the relay of one run,
// so that a program kept warm between runs (package program) keeps
// dialling the addresses it was started with, while each run's relay
// (Attach) forwards what they accept to that run's links, through that
// run's failpoints. Between two relays a Front accepts and closes at once.
type Front struct {
	listeners []net.Listener
	wg        sync.WaitGroup // the accept loops

	mu  sync.Mutex
	cur *Relay // the relay of the run under way; nil between runs
}

// NewFront listens on n addresses of 127.0.0.1. Close stops it.
func NewFront(n int) (*Front, error) {
	f := &Front{}
	for node := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("relay: listen: %w", err)
		}
		f.listeners = append(f.listeners, ln)
		f.wg.Add(1)
		go f.accept(ln, node)
	}
	return f, nil
}

// Addrs are the listeners' addresses, host:port, by lock node.
func (f *Front) Addrs() []string {
	var a []string
	for _, ln := range f.listeners {
		a = append(a, ln.Addr().String())
	}
	return a
}

// accept hands each connection of the listener of lock node node to the
// relay of the run under way, or closes it between runs.
func (f *Front) accept(ln net.Listener, node int) {
	defer f.wg.Done()
	for {
		down, err := ln.Accept()
		if err != nil {
			return // closed
		}
		f.mu.Lock()
		r := f.cur
		f.mu.Unlock()
		if r == nil {
			down.Close()
			continue
		}
		r.serveConn(down, node)
	}
}

// detach makes the front serve r no longer.
func (f *Front) detach(r *Relay) {
	f.mu.Lock()
	if f.cur == r {
		f.cur = nil
	}
	f.mu.Unlock()
}

// Close stops listening and waits for the accept loops; the relay
// attached, if any, is its owner's to close.
func (f *Front) Close() {
	for _, ln := range f.listeners {
		ln.Close()
	}
	f.wg.Wait()
}
