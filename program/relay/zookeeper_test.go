package relay

import (
	"bufio"
	"encoding/binary"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// zkRequest is a request frame of xid and opcode op whose body is body.
func zkRequest(xid, op int32, body string) string {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	return string(b) + body
}

// zkPath is a path as jute writes a string: its length, then its bytes.
func zkPath(p string) string {
	return string(binary.BigEndian.AppendUint32(nil, uint32(len(p)))) + p
}

// TestZKWords: a request is named by its opcode and the path it names; a
// multi by its first operation; a request without a path, or whose path
// is cut short, by its opcode alone.
func TestZKWords(t *testing.T) {
	tests := []struct {
		name string
		op   int32
		body string
		want []string
	}{
		{"create", 1, zkPath("/locklab/k/lock-") + "data", []string{"create", "/locklab/k/lock-"}},
		{"delete", 2, zkPath("/locklab/k/lock-0000000001") + "\xff\xff\xff\xff", []string{"delete", "/locklab/k/lock-0000000001"}},
		{"getChildren2", 12, zkPath("/locklab/k") + "\x00", []string{"getChildren2", "/locklab/k"}},
		{"createTTL", 21, zkPath("/t"), []string{"createTTL", "/t"}},
		{"multi", 14, "\x00\x00\x00\x0d\x00\xff\xff\xff\xff" + zkPath("/a"), []string{"multi", "check", "/a"}},
		{"close", -11, "", []string{"close"}},
		{"a path cut short", 4, "\x00\x00\x00\x10/ab", []string{"getData"}},
		{"a negative length", 4, "\xff\xff\xff\xff", []string{"getData"}},
		{"unknown", 77, zkPath("/x"), []string{"op77", "/x"}},
	}
	for _, tt := range tests {
		if got := zkWords(tt.op, []byte(tt.body)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestReadZKFrame: a frame is read whole, its length prefix included; a
// length past the bound is a protocol error, never an allocation.
func TestReadZKFrame(t *testing.T) {
	create := zkRequest(1, 1, zkPath("/a"))
	tests := []struct {
		name, in string
		err      bool
	}{
		{"create", create, false},
		{"close, no body", zkRequest(7, -11, ""), false},
		{"past the bound (ruok)", "ruok", true},
		{"cut short", create[:len(create)-1], true},
	}
	for _, tt := range tests {
		raw, err := readZKFrame(bufio.NewReader(strings.NewReader(tt.in)))
		if (err != nil) != tt.err || (err == nil && string(raw) != tt.in) {
			t.Errorf("%s: %q %v", tt.name, raw, err)
		}
	}
}

// TestZKEventAfterItsReply: a watch event the server sends right after a
// reply reaches the program after that reply, every time. A client
// registers its watch when the reply that sets it arrives and drops an
// event of a watch it does not know: an event handed on first was lost,
// and a lock recipe's waiter waited for it for ever (seen as a stuck
// zk-lock in contention-zk). The server here is a stand-in that answers
// every request with a reply and a deletion event in one write; what is
// tested is the relay's order, not ZooKeeper's.
func TestZKEventAfterItsReply(t *testing.T) {
	_, c := singleClient(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		in := bufio.NewReader(conn)
		if _, err := readZKFrame(in); err != nil { // the connect request
			return
		}
		conn.Write(zkFrameOf(make([]byte, 36))) // a connect reply
		for {
			req, err := readZKFrame(in)
			if err != nil {
				return
			}
			reply := zkFrameOf(binary.BigEndian.AppendUint32(append(slices.Clone(req[4:8]), make([]byte, 8)...), 0))
			event := zkFrameOf(append(binary.BigEndian.AppendUint32(nil, 0xffffffff), make([]byte, 12)...))
			conn.Write(append(reply, event...))
		}
	}()
	r, err := Listen(c, []string{ln.Addr().String()}, ZooKeeper)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	conn, err := net.Dial("tcp", r.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	out := bufio.NewReader(conn)
	conn.Write(zkFrameOf(make([]byte, 40)))
	if _, err := readZKFrame(out); err != nil {
		t.Fatalf("connect reply: %v", err)
	}
	for xid := int32(1); xid <= 200; xid++ {
		conn.Write([]byte(zkRequest(xid, 4, zkPath("/locklab/lock/n"))))
		for _, want := range []int32{xid, -1} {
			raw, err := readZKFrame(out)
			if err != nil {
				t.Fatalf("request %d: %v", xid, err)
			}
			if got := int32(binary.BigEndian.Uint32(raw[4:])); got != want {
				t.Fatalf("request %d: the program got xid %d first, want its reply and then the event", xid, got)
			}
		}
	}
}

// zkFrameOf is body with its length before it.
func zkFrameOf(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}
