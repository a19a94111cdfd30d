package h2

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"

	"golang.org/x/net/http2"
)

// ErrNotHTTP2 is what Serve returns, having read nothing, when the
// program's connection does not open with HTTP/2's client preface: the
// caller may pipe it as it came.
var ErrNotHTTP2 = errors.New("h2: the connection does not start with HTTP/2's client preface")

// errReset is a call's end when a peer reset its stream (RST_STREAM): no
// reply follows.
var errReset = errors.New("h2: the stream was reset")

// Calls is what Serve asks of its caller.
type Calls struct {
	// Unary reports whether the method of path is a unary call, which Run
	// runs; any other (a streaming call) passes at once both ways.
	Unary func(path string) bool
	// Run runs the unary call to path: it calls send at most once, which
	// forwards the request and returns when its reply is complete, with
	// the status the server ended it with (a StatusError) or what broke
	// it. Run reports whether the reply may be handed on; when it may not,
	// the connection ends.
	Run func(path string, send func() error) bool
	// Done, when set, is told of each unary call Run handed on: its
	// path, and the DATA its request and its reply carried (each at most
	// maxBody bytes: gRPC's length-prefixed messages), for a reader of
	// what the call asked and got.
	Done func(path string, request, reply []byte)
}

// maxBody bounds the DATA kept of one call's request or reply for
// Calls.Done: a lock's requests are small, and what is cut shows nothing.
const maxBody = 64 << 10

// call is a unary call the program opened, in the order it did.
type call struct {
	stream uint32
	path   string
}

// conn is one relayed connection. Three goroutines serve it: requests,
// which passes the program's frames on, holding each unary call's (and
// what must follow it) in toUp until work sends it; work, which runs the
// unary calls one at a time, in order, each through Run; replies, which
// passes the server's frames on, holding those of the call in flight (and
// what must follow them) in toDown until Run hands its reply on. The
// frames of the streaming calls pass beside the held ones, so that a held
// call holds neither a lease's keep-alives nor a watch's events.
type conn struct {
	calls        Calls
	down, up     net.Conn
	toUp, toDown gate
	queue        chan call
	upDone       chan struct{} // closed when the server's side ended
	done         chan struct{} // closed by end
	once         sync.Once

	mu       sync.Mutex
	inflight uint32           // the stream of the call sent, waiting for its reply; 0 for none
	replying bool             // a frame of its reply has come (and held toDown)
	result   chan error       // its end: its status, or the reset of its stream
	queued   map[uint32]bool  // the streams of the unary calls not yet sent: whether the program reset them
	bodies   map[uint32]*body // the unary calls' DATA, when Calls.Done is set
}

// body is what a unary call's DATA frames carried, each way.
type body struct{ request, reply []byte }

// keep appends f's data to b, up to maxBody.
func keep(b []byte, f Frame) []byte {
	if d := f.Data(); len(b)+len(d) <= maxBody {
		return append(b, d...)
	}
	return b
}

// Serve relays the program's connection down, read through in, to its
// server's, up, read through out, until either ends: the client's preface
// then the frames of both directions, each unary call through calls.Run.
func Serve(down net.Conn, in *bufio.Reader, up net.Conn, out *bufio.Reader, calls Calls) error {
	if b, err := in.Peek(len(http2.ClientPreface)); err != nil || string(b) != http2.ClientPreface {
		if err == nil {
			err = ErrNotHTTP2
		}
		return err
	}
	in.Discard(len(http2.ClientPreface))
	if _, err := up.Write([]byte(http2.ClientPreface)); err != nil {
		return err
	}
	c := &conn{calls: calls, down: down, up: up, toUp: gate{w: up}, toDown: gate{w: down},
		queue: make(chan call, 1024), upDone: make(chan struct{}), done: make(chan struct{}), queued: map[uint32]bool{},
		bodies: map[uint32]*body{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.replies(NewReader(out)) }()
	go func() { defer wg.Done(); c.work() }()
	err := c.requests(NewReader(in))
	c.end()
	wg.Wait()
	return err
}

// end closes both sides of the connection, once.
func (c *conn) end() {
	c.once.Do(func() {
		close(c.done)
		c.down.Close()
		c.up.Close()
	})
}

// requests reads the program's frames until its connection ends. A
// header block on a stream of a number above all before it opens that
// stream (RFC 9113 §5.1.1): a call.
func (c *conn) requests(r *Reader) error {
	var last uint32
	for {
		f, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
				return nil
			}
			return err
		}
		opens := f.Type == http2.FrameHeaders && f.Stream > last
		if opens {
			last = f.Stream
		}
		unary := opens && c.calls.Unary(f.Field(":path"))
		if unary {
			c.mu.Lock()
			c.queued[f.Stream] = false
			if c.calls.Done != nil {
				c.bodies[f.Stream] = &body{}
			}
			c.mu.Unlock()
		}
		if f.Type == http2.FrameData {
			c.mu.Lock()
			if b := c.bodies[f.Stream]; b != nil {
				b.request = keep(b.request, f)
			}
			c.mu.Unlock()
		}
		if err := c.toUp.pass(f, unary); err != nil {
			return nil
		}
		if f.Type == http2.FrameRSTStream {
			c.resetByProgram(f.Stream)
		}
		if unary {
			select {
			case c.queue <- call{stream: f.Stream, path: f.Field(":path")}:
			case <-c.done:
				return nil
			}
		}
	}
}

// resetByProgram ends the call of stream, which the program reset: in
// flight, it waits no more for a reply; not yet sent, it will not.
func (c *conn) resetByProgram(stream uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if stream == c.inflight {
		finish(c.result, context.Canceled)
		return
	}
	if _, ok := c.queued[stream]; ok {
		c.queued[stream] = true
	}
}

// finish hands a call its end, once: result is the call's own, so that a
// late end (its reply's, after the program reset it) is never the next
// call's.
func finish(result chan error, err error) {
	select {
	case result <- err:
	default:
	}
}

// replies reads the server's frames until its connection ends.
func (c *conn) replies(r *Reader) {
	defer close(c.upDone)
	for {
		f, err := r.Next()
		if err != nil {
			return
		}
		c.mu.Lock()
		ours := f.Stream != 0 && f.Stream == c.inflight
		first, result := ours && !c.replying, c.result
		c.replying = c.replying || ours
		if b := c.bodies[f.Stream]; ours && b != nil && f.Type == http2.FrameData {
			b.reply = keep(b.reply, f)
		}
		c.mu.Unlock()
		if c.toDown.pass(f, first) != nil {
			return
		}
		switch {
		case ours && f.Type == http2.FrameRSTStream:
			finish(result, errReset)
		case ours && f.EndStream():
			finish(result, Status(f))
		}
	}
}

// work runs the unary calls in order, one at a time.
func (c *conn) work() {
	defer c.end()
	for {
		var next call
		select {
		case next = <-c.queue:
		case <-c.upDone:
			return
		case <-c.done:
			return
		}
		if !c.calls.Run(next.path, func() error { return c.send(next) }) {
			return // struck: crashed, its reply dropped, or the run ended
		}
		c.mu.Lock()
		c.inflight, c.replying = 0, false
		b := c.bodies[next.stream]
		delete(c.bodies, next.stream)
		c.mu.Unlock()
		if b != nil {
			c.calls.Done(next.path, b.request, b.reply)
		}
		if c.toDown.release() != nil {
			return
		}
	}
}

// send forwards call's request, with what waited behind it and need wait
// no longer, and waits for the end of its reply.
func (c *conn) send(next call) error {
	result := make(chan error, 1)
	c.mu.Lock()
	c.inflight, c.replying, c.result = next.stream, false, result
	reset := c.queued[next.stream]
	delete(c.queued, next.stream)
	c.mu.Unlock()
	if err := c.toUp.release(); err != nil {
		return err
	}
	if reset {
		return context.Canceled
	}
	select {
	case err := <-result:
		return err
	case <-c.done:
		return net.ErrClosed
	case <-c.upDone:
		select {
		case err := <-result:
			return err
		default:
			return io.ErrUnexpectedEOF
		}
	}
}

// gate is one direction of the connection: it forwards each frame at
// once, unless it must wait behind a held one. A barrier is held until
// release; behind it wait every later header block (the HPACK state,
// RFC 7541 §2.3, changes block by block, so blocks keep their order),
// SETTINGS and GOAWAY (whose order with the blocks says which requests
// they concern), and every later frame of a stream with a frame waiting
// (a stream's frames keep their order, RFC 9113 §5.1). Other frames
// (DATA and WINDOW_UPDATE of the streaming calls, PING) pass.
type gate struct {
	mu      sync.Mutex
	w       io.Writer
	waiting []held
}

// held is a frame the gate holds; barrier marks one held until release.
type held struct {
	f       Frame
	barrier bool
}

// pass forwards f, or holds it: a barrier, or a frame that must wait.
func (g *gate) pass(f Frame, barrier bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if barrier || mustWait(g.waiting, f) {
		g.waiting = append(g.waiting, held{f, barrier})
		return nil
	}
	_, err := g.w.Write(f.Raw)
	return err
}

// release forwards the first barrier and every frame held that no longer
// must wait, in the order they came; the next barrier, and what must wait
// behind it, stay held.
func (g *gate) release() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	waiting := g.waiting
	g.waiting = nil
	for i, h := range waiting {
		if i > 0 && (h.barrier || mustWait(g.waiting, h.f)) {
			g.waiting = append(g.waiting, h)
			continue
		}
		if _, err := g.w.Write(h.f.Raw); err != nil {
			return err
		}
	}
	return nil
}

// mustWait reports whether f must wait behind the frames waiting.
func mustWait(waiting []held, f Frame) bool {
	if len(waiting) == 0 {
		return false
	}
	switch f.Type {
	case http2.FramePing:
		return false
	case http2.FrameHeaders, http2.FramePushPromise, http2.FrameSettings, http2.FrameGoAway:
		return true
	}
	return f.Stream != 0 && behindStream(waiting, f.Stream)
}

// behindStream reports whether a frame of stream is waiting.
func behindStream(waiting []held, stream uint32) bool {
	for _, h := range waiting {
		if h.f.Stream == stream {
			return true
		}
	}
	return false
}
