package h2

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"golang.org/x/net/http2"
)

// TestGate: behind a barrier (a held call's request) wait every later
// header block, SETTINGS, and every frame of a stream with a frame
// waiting; DATA of other streams (a keep-alive) and PING pass. Release
// forwards the barrier and what no longer must wait, in order, and keeps
// the next barrier with what must wait behind it.
func TestGate(t *testing.T) {
	// Each frame's Raw is its name, so that what was written reads as a
	// sequence of names.
	frame := func(name string, typ http2.FrameType, stream uint32) Frame {
		return Frame{Raw: []byte(name + " "), Type: typ, Stream: stream}
	}
	type step struct {
		f       Frame
		barrier bool
		release bool // release, not pass
	}
	tests := []struct {
		name  string
		steps []step
		want  string // written, in order
		held  int    // frames left waiting
	}{
		{"nothing held: all pass", []step{
			{f: frame("ka-data", http2.FrameData, 1)},
			{f: frame("get-headers", http2.FrameHeaders, 3)},
		}, "ka-data get-headers ", 0},
		{"a held call: its data, and later blocks, wait; a keep-alive passes", []step{
			{f: frame("txn-headers", http2.FrameHeaders, 3), barrier: true},
			{f: frame("txn-data", http2.FrameData, 3)},
			{f: frame("ka-data", http2.FrameData, 1)},
			{f: frame("ping", http2.FramePing, 0)},
			{f: frame("watch-headers", http2.FrameHeaders, 5)},
			{f: frame("watch-data", http2.FrameData, 5)},
			{f: frame("settings", http2.FrameSettings, 0)},
			{f: frame("conn-window", http2.FrameWindowUpdate, 0)},
		}, "ka-data ping conn-window ", 5},
		{"released: all of it, in order", []step{
			{f: frame("txn-headers", http2.FrameHeaders, 3), barrier: true},
			{f: frame("txn-data", http2.FrameData, 3)},
			{f: frame("ka-data", http2.FrameData, 1)},
			{f: frame("watch-headers", http2.FrameHeaders, 5)},
			{release: true},
			{f: frame("watch-data", http2.FrameData, 5)},
		}, "ka-data txn-headers txn-data watch-headers watch-data ", 0},
		{"the next call stays held, its data too, but not the first call's", []step{
			{f: frame("txn-headers", http2.FrameHeaders, 3), barrier: true},
			{f: frame("put-headers", http2.FrameHeaders, 5), barrier: true},
			{f: frame("txn-data", http2.FrameData, 3)},
			{f: frame("put-data", http2.FrameData, 5)},
			{f: frame("range-headers", http2.FrameHeaders, 7)},
			{release: true},
		}, "txn-headers txn-data ", 3},
		{"released twice", []step{
			{f: frame("txn-headers", http2.FrameHeaders, 3), barrier: true},
			{f: frame("put-headers", http2.FrameHeaders, 5), barrier: true},
			{f: frame("put-data", http2.FrameData, 5)},
			{release: true},
			{release: true},
			{release: true},
		}, "txn-headers put-headers put-data ", 0},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		g := gate{w: &out}
		for _, s := range tt.steps {
			var err error
			if s.release {
				err = g.release()
			} else {
				err = g.pass(s.f, s.barrier)
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		if out.String() != tt.want || len(g.waiting) != tt.held {
			t.Errorf("%s: wrote %q with %d held, want %q with %d", tt.name, out.String(), len(g.waiting), tt.want, tt.held)
		}
	}
}

// peer is one end of a relayed connection in TestServe: what it writes
// goes through w's framer, what it reads comes on frames.
type peer struct {
	w      *wire
	conn   net.Conn
	frames chan Frame
}

// newPeer reads conn's frames (from after skip bytes) onto frames until it
// ends, then closes frames.
func newPeer(t *testing.T, conn net.Conn, skip int) *peer {
	p := &peer{w: newWire(), conn: conn, frames: make(chan Frame, 64)}
	p.w.fr = http2.NewFramer(conn, nil)
	go func() {
		defer close(p.frames)
		in := bufio.NewReader(conn)
		if _, err := in.Discard(skip); err != nil {
			return
		}
		r := NewReader(in)
		for {
			f, err := r.Next()
			if err != nil {
				return
			}
			p.frames <- f
		}
	}()
	return p
}

// expect reads the next frame and checks its type and stream.
func (p *peer) expect(t *testing.T, who string, typ http2.FrameType, stream uint32) Frame {
	t.Helper()
	f, ok := <-p.frames
	if !ok || f.Type != typ || f.Stream != stream {
		t.Fatalf("%s got %v on stream %d (open: %v), want %v on %d", who, f.Type, f.Stream, ok, typ, stream)
	}
	return f
}

// TestServe relays a connection between x/net framers: a streaming call's
// frames pass while a unary call is held before it is sent; once sent, the
// call's reply reaches the program when Run hands it on, and when Run
// drops it the program's connection ends with none of it.
func TestServe(t *testing.T) {
	for _, handOn := range []bool{true, false} {
		progEnd, relayDown := net.Pipe()
		relayUp, serverEnd := net.Pipe()
		prog, server := newPeer(t, progEnd, 0), newPeer(t, serverEnd, len(http2.ClientPreface))
		hold, ran := make(chan struct{}), make(chan error, 1)
		served, done := make(chan error, 1), make(chan [3]string, 1)
		go func() {
			served <- Serve(relayDown, bufio.NewReader(relayDown), relayUp, bufio.NewReader(relayUp), Calls{
				Unary: func(path string) bool { return path != "/etcdserverpb.Lease/LeaseKeepAlive" },
				Run: func(path string, send func() error) bool {
					<-hold
					err := send()
					ran <- err
					return handOn
				},
				Done: func(path string, request, reply []byte) { done <- [3]string{path, string(request), string(reply)} },
			})
		}()
		io.WriteString(progEnd, http2.ClientPreface)
		prog.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: prog.w.request("/etcdserverpb.Lease/LeaseKeepAlive"), EndHeaders: true})
		server.expect(t, "the server", http2.FrameHeaders, 1)
		prog.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: prog.w.request("/etcdserverpb.KV/Put"), EndHeaders: true})
		prog.w.fr.WriteData(3, true, []byte{0, 0, 0, 0, 1, 0xaa})
		prog.w.fr.WriteData(1, false, []byte{0, 0, 0, 0, 0})
		server.expect(t, "the server, the Put held", http2.FrameData, 1)
		server.w.fr.WriteData(1, false, []byte{0, 0, 0, 0, 0})
		prog.expect(t, "the program, the Put held", http2.FrameData, 1)

		close(hold)
		if f := server.expect(t, "the server, the Put sent", http2.FrameHeaders, 3); f.Field(":path") != "/etcdserverpb.KV/Put" {
			t.Fatalf("the server got %q", f.Field(":path"))
		}
		server.expect(t, "the server", http2.FrameData, 3)
		server.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: server.w.block(":status", "200"), EndHeaders: true})
		server.w.fr.WriteData(3, false, []byte{0, 0, 0, 0, 1, 0xbb})
		server.w.fr.WriteData(1, false, []byte{0, 0, 0, 0, 0})
		// The keep-alive's reply passes the Put's, held until Run ends.
		prog.expect(t, "the program, the Put's reply held", http2.FrameData, 1)
		server.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: server.w.block("grpc-status", "5", "grpc-message", "gone"), EndHeaders: true, EndStream: true})
		if err := <-ran; err != (StatusError{5, "gone"}) {
			t.Errorf("send: %v, want the trailers' status", err)
		}
		if handOn {
			prog.expect(t, "the program, the reply handed on", http2.FrameHeaders, 3)
			prog.expect(t, "the program", http2.FrameData, 3)
			if f := prog.expect(t, "the program", http2.FrameHeaders, 3); f.Field("grpc-status") != "5" || !f.EndStream() {
				t.Errorf("the trailers: %v", f.Fields)
			}
			progEnd.Close()
			// Done hears what the call asked and got, the keep-alive's
			// DATA left out.
			want := [3]string{"/etcdserverpb.KV/Put", "\x00\x00\x00\x00\x01\xaa", "\x00\x00\x00\x00\x01\xbb"}
			if got := <-done; got != want {
				t.Errorf("Done: %q, want %q", got, want)
			}
		} else if f, ok := <-prog.frames; ok {
			t.Errorf("the reply dropped, the program got %v on %d", f.Type, f.Stream)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		serverEnd.Close()
	}
}

// TestServeReset: a call the program resets while it is held is sent with
// its reset, and waits for no reply (send says it was canceled); the
// connection goes on, the next call answered.
func TestServeReset(t *testing.T) {
	progEnd, relayDown := net.Pipe()
	relayUp, serverEnd := net.Pipe()
	defer progEnd.Close()
	defer serverEnd.Close()
	prog, server := newPeer(t, progEnd, 0), newPeer(t, serverEnd, len(http2.ClientPreface))
	hold, ran := make(chan struct{}, 2), make(chan error, 2)
	go Serve(relayDown, bufio.NewReader(relayDown), relayUp, bufio.NewReader(relayUp), Calls{
		Unary: func(string) bool { return true },
		Run: func(path string, send func() error) bool {
			<-hold
			ran <- send()
			return true
		},
	})
	io.WriteString(progEnd, http2.ClientPreface)
	prog.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: prog.w.request("/etcdserverpb.KV/Put"), EndHeaders: true})
	prog.w.fr.WriteData(1, true, []byte{0, 0, 0, 0, 0})
	prog.w.fr.WriteRSTStream(1, http2.ErrCodeCancel)
	prog.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: prog.w.request("/etcdserverpb.KV/Range"), EndHeaders: true})
	prog.w.fr.WriteData(3, true, []byte{0, 0, 0, 0, 0})
	hold <- struct{}{}
	server.expect(t, "the server", http2.FrameHeaders, 1)
	server.expect(t, "the server", http2.FrameData, 1)
	server.expect(t, "the server", http2.FrameRSTStream, 1)
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Errorf("the reset call's send: %v, want canceled", err)
	}
	hold <- struct{}{}
	server.expect(t, "the server", http2.FrameHeaders, 3)
	server.expect(t, "the server", http2.FrameData, 3)
	server.w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: server.w.block(":status", "200", "grpc-status", "0"), EndHeaders: true, EndStream: true})
	if err := <-ran; err != nil {
		t.Errorf("the next call's send: %v", err)
	}
	prog.expect(t, "the program", http2.FrameHeaders, 3)
}
