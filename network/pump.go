package network

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
)

// Why a link carries its own connections instead of letting toxiproxy do it.
//
// toxiproxy moves every chunk through three goroutines per direction (a
// reader, the chain's hidden noop toxic, a writer) joined by unbuffered
// channels: a command and its reply make four goroutine hand-offs more than
// a plain TCP proxy, and each, readying a goroutine while the other P is
// idle, wakes a second thread (futex) that spins for work it rarely gets.
// Profiled on 2 cores, one acquire+release of the token lock through a link
// cost 210 µs of CPU against 50 µs direct: 88 µs in toxiproxy's goroutines,
// 45 µs in the scheduler looking for work (16 µs of it futex); wall time
// 2.6× direct (on the 2-core CI machine). Copied by a pump: 108 µs of CPU, 48 of them the
// pump's four writes and reads (the second TCP hop's own price), no futex
// to speak of; wall time 1.4× direct.
//
// So a Link accepts and dials itself, and a direction with no toxic on its
// link is copied by one goroutine, read then write, as any TCP proxy does.
// Toxics stay toxiproxy's own: before one is added in a direction, every
// open connection's copy in that direction is handed to a toxiproxy
// ToxicLink (StartLink), the very pipeline toxiproxy would have used, which
// then applies the toxic to the bytes not yet read and keeps that
// connection for its life; connections accepted while the direction has
// toxics start there. A cut closes the listener and every connection, as
// toxiproxy's disabled proxy does.

// conn is one client connection through a link and the connection the link
// dialled to the upstream for it.
type conn struct {
	client, upstream *net.TCPConn
	pumps            [stream.NumDirections]*pump
}

// pump copies one direction of a conn by itself until the link diverts it
// to toxiproxy.
type pump struct {
	src, dst *net.TCPConn
	dir      stream.Direction

	mu     sync.Mutex
	divert chan struct{} // non-nil once asked to hand over; closed when it did or ended
	done   bool          // the pump no longer copies: handed over or ended
}

// pumpBuffer is the size of a pump's read buffer, as io.Copy's.
const pumpBuffer = 32 << 10

// run copies until src or dst fails, then closes dst, as toxiproxy's writer
// does, so the failure reaches the other side; or until the link diverts it,
// then starts toxiproxy's pipeline on src and dst where it left off. It
// reports whether it handed over.
func (p *pump) run(l *Link, name string) (diverted bool) {
	buf := make([]byte, pumpBuffer)
	for {
		n, err := p.src.Read(buf)
		if n > 0 {
			if _, werr := p.dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err == nil {
			continue
		}
		p.mu.Lock()
		diverted = p.divert != nil && errors.Is(err, os.ErrDeadlineExceeded)
		p.done = true
		if diverted {
			// The deadline was only the divert's way to end the Read;
			// every byte read so far was written, so the pipeline takes
			// over with nothing in between.
			if derr := p.src.SetReadDeadline(time.Time{}); derr == nil {
				l.toxics.StartLink(l.net.server, name, p.src, p.dst, p.dir)
			} else {
				diverted = false
			}
		}
		if p.divert != nil {
			close(p.divert)
		}
		p.mu.Unlock()
		if !diverted {
			p.dst.Close()
		}
		return diverted
	}
}

// handOver asks the pump to stop copying and give its direction to
// toxiproxy; the channel is closed once it did, or once it ended.
func (p *pump) handOver() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.divert == nil {
		p.divert = make(chan struct{})
		if p.done {
			close(p.divert)
			return p.divert
		}
		// A deadline in the past ends a blocked Read at once, without
		// losing what the socket holds.
		p.src.SetReadDeadline(time.Unix(1, 0))
	}
	return p.divert
}

// listen binds the link's address and serves it until the listener closes.
// Only one listener is up at a time; the caller holds l.connMu.
func (l *Link) listen() error {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	l.listener = ln
	l.serving.Add(1)
	go l.accept(ln.(*net.TCPListener))
	return nil
}

// accept serves one listener: each accepted client is given a fresh
// connection to the upstream, dialled in turn, as toxiproxy does; a client
// whose upstream cannot be dialled is closed.
func (l *Link) accept(ln *net.TCPListener) {
	defer l.serving.Done()
	for {
		client, err := ln.AcceptTCP()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", l.upstream)
		if err != nil {
			client.Close()
			continue
		}
		l.start(ln, client, up.(*net.TCPConn))
	}
}

// start carries a new connection, unless the listener that accepted it was
// closed meanwhile by a cut or Close, which then missed it.
func (l *Link) start(ln net.Listener, client, upstream *net.TCPConn) {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	if l.listener != ln {
		client.Close()
		upstream.Close()
		return
	}
	c := &conn{client: client, upstream: upstream}
	l.conns[c] = struct{}{}
	l.seq++
	base := fmt.Sprintf("%s-%d", client.RemoteAddr(), l.seq)
	for dir, ends := range [stream.NumDirections][2]*net.TCPConn{
		stream.Upstream:   {client, upstream},
		stream.Downstream: {upstream, client},
	} {
		d := stream.Direction(dir)
		name := base + d.String()
		if l.toxicsOn[d] > 0 {
			l.toxics.StartLink(l.net.server, name, ends[0], ends[1], d)
			continue
		}
		p := &pump{src: ends[0], dst: ends[1], dir: d}
		c.pumps[d] = p
		go func() {
			if !p.run(l, name) {
				l.forget(c)
			}
		}()
	}
}

// forget drops c from the open connections: one of its directions ended
// and closed its destination, which ends the other. A conn handed whole to
// toxiproxy stays listed until Close or a cut closes it again, harmlessly.
func (l *Link) forget(c *conn) {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	delete(l.conns, c)
}

// divert counts a toxic about to be added in direction dir and hands every
// open connection's copy in that direction to toxiproxy, so the toxic
// reaches them as it reaches connections toxiproxy accepted itself.
func (l *Link) divert(dir stream.Direction) {
	l.connMu.Lock()
	l.toxicsOn[dir]++
	var waits []<-chan struct{}
	for c := range l.conns {
		if p := c.pumps[dir]; p != nil {
			waits = append(waits, p.handOver())
		}
	}
	l.connMu.Unlock()
	for _, w := range waits {
		<-w
	}
}

// undivert counts a toxic removed from direction dir: once none is left,
// new connections are copied by pumps again. Open ones stay with toxiproxy.
func (l *Link) undivert(dir stream.Direction) {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	l.toxicsOn[dir]--
}

// down closes the listener and every connection through the link, so new
// ones are refused; it waits for the accept loop to end.
func (l *Link) down() {
	l.connMu.Lock()
	if l.listener != nil {
		l.listener.Close()
		l.listener = nil
	}
	for c := range l.conns {
		c.client.Close()
		c.upstream.Close()
		delete(l.conns, c)
	}
	l.connMu.Unlock()
	l.serving.Wait()
}

// up rebinds the link's address after down.
func (l *Link) up() error {
	l.connMu.Lock()
	defer l.connMu.Unlock()
	if l.listener != nil {
		return nil
	}
	return l.listen()
}

// toxicsOf is the server side of a link's proxy, which holds its toxics.
func toxicsOf(server *toxiproxy.ApiServer, name string) (*toxiproxy.ToxicCollection, error) {
	p, err := server.Collection.Get(name)
	if err != nil {
		return nil, err
	}
	return p.Toxics, nil
}
