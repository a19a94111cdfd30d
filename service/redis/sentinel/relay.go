package sentinel

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/resp"
)

// sentinelDialTimeout bounds a relayed Sentinel's dial to its Sentinel, a
// local server no fault touches.
const sentinelDialTimeout = time.Second

// Relay is one lock program's relayed Sentinels: a listener on 127.0.0.1
// per Sentinel, forwarding each connection to that Sentinel directly (no
// fault is meant to sit between a client and the Sentinels, as for
// FailoverClient), and rewriting every address of a data node in the
// Sentinel's replies and pub/sub messages to the program's relay to that
// node. So the master Sentinel names, before a failover and after it, is
// one the program dials through its relay, where faults at its commands
// strike, and through its client's link to the node, which partitions
// cut. An address Sentinel gives that names no data node (a Sentinel's
// own) passes unchanged.
type Relay struct {
	to        map[string]string // a data node's address as Sentinel names it (host:port) → the program's relay to it
	listeners []net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// RelaySentinels starts a program's relayed Sentinels, one per Sentinel,
// for relays, the program's relay to each data node in the order of Nodes,
// and returns their addresses, in the order of SentinelAddrs, and what
// stops them (harness.SentinelRelayer).
func (r *ReplicaSet) RelaySentinels(relays []string) ([]string, io.Closer, error) {
	if len(relays) != len(r.nodes) {
		return nil, nil, fmt.Errorf("relay the Sentinels: %d relays for %d data nodes", len(relays), len(r.nodes))
	}
	s := &Relay{to: map[string]string{}, conns: map[net.Conn]struct{}{}}
	for i, n := range r.nodes {
		// Sentinel names a node by its address on a cluster.Networked
		// backend's network, by its own on local processes.
		s.to[n.Addr()], s.to[r.peerAddr(n)] = relays[i], relays[i]
	}
	var addrs []string
	for _, up := range r.SentinelAddrs() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("relay the Sentinel at %s: %w", up, err)
		}
		s.listeners = append(s.listeners, ln)
		addrs = append(addrs, ln.Addr().String())
		s.wg.Add(1)
		go s.accept(ln, up)
	}
	return addrs, s, nil
}

// accept serves the connections of the listener in front of the Sentinel
// at up.
func (s *Relay) accept(ln net.Listener, up string) {
	defer s.wg.Done()
	for {
		down, err := ln.Accept()
		if err != nil {
			return // closed
		}
		if !s.track(down) {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(down)
			upConn, err := net.DialTimeout("tcp", up, sentinelDialTimeout)
			if err != nil {
				return // the program sees its connection closed
			}
			if !s.track(upConn) {
				return
			}
			defer s.untrack(upConn)
			s.serve(down, upConn)
		}()
	}
}

// serve passes each command of the program to the Sentinel as it came and
// each reply back rewritten, until either side closes. After a SUBSCRIBE
// replies no longer pair with commands: from there, the commands pass
// unread and every message comes back rewritten.
func (s *Relay) serve(down, up net.Conn) {
	in, out := bufio.NewReader(down), bufio.NewReader(up)
	for {
		args, raw, err := resp.ReadCommand(in)
		if err != nil {
			return
		}
		if _, err := up.Write(raw); err != nil {
			return
		}
		if len(args) > 0 && (strings.EqualFold(args[0], "subscribe") || strings.EqualFold(args[0], "psubscribe")) {
			s.wg.Add(1)
			go func() { defer s.wg.Done(); io.Copy(up, in); up.Close() }()
			for {
				if err := s.pass(down, out); err != nil {
					return
				}
			}
		}
		// A RESP3 push before the reply is passed on, rewritten, too.
		for {
			v, err := resp.ReadValue(out)
			if err != nil {
				return
			}
			if _, err := down.Write(s.rewritten(v)); err != nil || v.Kind != '>' {
				break
			}
		}
	}
}

// pass reads one value from the Sentinel and writes it, rewritten, to the
// program.
func (s *Relay) pass(down net.Conn, out *bufio.Reader) error {
	v, err := resp.ReadValue(out)
	if err != nil {
		return err
	}
	_, err = down.Write(s.rewritten(v))
	return err
}

// rewritten is v's bytes, with every data node's address in it renamed to
// the program's relay to that node.
func (s *Relay) rewritten(v resp.Value) []byte {
	if s.rename(&v) {
		return v.Append(nil)
	}
	return v.Raw
}

// rename rewrites each data node's address in v, and reports whether it
// found one. Sentinel names a node as a host and a port in a reply of two
// (GET-MASTER-ADDR-BY-NAME), as the values of the fields ip and port, or
// master-host and master-port, of a flat field list (MASTERS, MASTER,
// REPLICAS, SLAVES, as RESP2 arrays or RESP3 maps), as one host:port
// string (a replica's name), and as words of a pub/sub message
// (+switch-master's "name old-host old-port new-host new-port").
func (s *Relay) rename(v *resp.Value) bool {
	if v.Kind == '$' || v.Kind == '+' {
		to, ok := s.to[v.Str]
		if ok {
			v.Str = to
		}
		return ok
	}
	e := v.Elems
	found := false
	if len(e) == 2 && isString(e[0]) && isString(e[1]) {
		found = s.renamePair(&e[0], &e[1])
	}
	for _, f := range [][2]string{{"ip", "port"}, {"master-host", "master-port"}} {
		if h, p := fieldValue(e, f[0]), fieldValue(e, f[1]); h != nil && p != nil {
			found = s.renamePair(h, p) || found
		}
	}
	if len(e) >= 3 && isString(e[0]) && (e[0].Str == "message" || e[0].Str == "pmessage") && isString(e[len(e)-1]) {
		found = s.renameWords(&e[len(e)-1]) || found
	}
	for i := range e {
		found = s.rename(&e[i]) || found
	}
	return found
}

// renamePair renames the data node at host and port, two strings.
func (s *Relay) renamePair(host, port *resp.Value) bool {
	to, ok := s.to[net.JoinHostPort(host.Str, port.Str)]
	if !ok {
		return false
	}
	host.Str, port.Str, _ = net.SplitHostPort(to)
	return true
}

// renameWords renames each data node named in the words of the string v,
// as a host word then a port word, or one host:port word.
func (s *Relay) renameWords(v *resp.Value) bool {
	words := strings.Split(v.Str, " ")
	found := false
	for i := range words {
		if to, ok := s.to[words[i]]; ok {
			words[i], found = to, true
			continue
		}
		if i+1 < len(words) {
			if to, ok := s.to[net.JoinHostPort(words[i], words[i+1])]; ok {
				words[i], words[i+1], _ = net.SplitHostPort(to)
				found = true
			}
		}
	}
	if found {
		v.Str = strings.Join(words, " ")
	}
	return found
}

// isString reports whether v is a simple or bulk string.
func isString(v resp.Value) bool { return (v.Kind == '$' || v.Kind == '+') && !v.Null }

// fieldValue is the value of field name in the flat field list e (name,
// value, name, value …), or nil.
func fieldValue(e []resp.Value, name string) *resp.Value {
	if len(e)%2 != 0 {
		return nil
	}
	for i := 0; i < len(e); i += 2 {
		if isString(e[i]) && e[i].Str == name && isString(e[i+1]) {
			return &e[i+1]
		}
	}
	return nil
}

// track registers conn to be closed by Close; it refuses, and closes
// conn, once the relay is closed.
func (s *Relay) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		conn.Close()
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *Relay) untrack(conn net.Conn) {
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	conn.Close()
}

// Close stops listening, closes every connection and waits for the
// relayed Sentinels' goroutines.
func (s *Relay) Close() error {
	var errs []error
	for _, ln := range s.listeners {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	s.mu.Lock()
	s.closed = true
	for conn := range s.conns {
		conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errs...)
}
