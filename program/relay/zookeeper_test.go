package relay

import (
	"bufio"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
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
