package h2

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// wire builds frames as a peer sends them: x/net's Framer, and one HPACK
// encoder for the direction, so that later blocks refer to the dynamic
// table earlier ones filled.
type wire struct {
	buf bytes.Buffer
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
}

func newWire() *wire {
	w := &wire{}
	w.fr = http2.NewFramer(&w.buf, nil)
	w.enc = hpack.NewEncoder(&w.hb)
	return w
}

// block encodes fields (name, value pairs) as one header block.
func (w *wire) block(fields ...string) []byte {
	w.hb.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		w.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), w.hb.Bytes()...)
}

// request is a gRPC call's request headers, for path.
func (w *wire) request(path string) []byte {
	return w.block(":method", "POST", ":scheme", "http", ":path", path, ":authority", "127.0.0.1", "content-type", "application/grpc", "te", "trailers")
}

// TestReaderBlocks: a header block is read as one Frame, whatever frames
// carry it (padding, priority, CONTINUATION), with every byte as it came,
// and its fields decoded with the HPACK state the blocks before it left;
// frames that break a block are an error.
func TestReaderBlocks(t *testing.T) {
	type want struct {
		typ       http2.FrameType
		stream    uint32
		path      string
		status    string
		endStream bool
	}
	tests := []struct {
		name  string
		write func(w *wire)
		want  []want
		err   bool
	}{
		{"a request, then another from the dynamic table", func(w *wire) {
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.request("/etcdserverpb.KV/Txn"), EndHeaders: true})
			w.fr.WriteData(1, true, []byte{0, 0, 0, 0, 0})
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: w.request("/etcdserverpb.KV/Txn"), EndHeaders: true})
		}, []want{{http2.FrameHeaders, 1, "/etcdserverpb.KV/Txn", "", false}, {http2.FrameData, 1, "", "", true}, {http2.FrameHeaders, 3, "/etcdserverpb.KV/Txn", "", false}}, false},
		{"padded, with priority", func(w *wire) {
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: w.request("/etcdserverpb.Lease/LeaseGrant"), EndHeaders: true, PadLength: 7,
				Priority: http2.PriorityParam{StreamDep: 1, Weight: 9}})
		}, []want{{http2.FrameHeaders, 5, "/etcdserverpb.Lease/LeaseGrant", "", false}}, false},
		{"split over CONTINUATIONs", func(w *wire) {
			b := w.request("/etcdserverpb.KV/Put")
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 7, BlockFragment: b[:3]})
			w.fr.WriteContinuation(7, false, b[3:6])
			w.fr.WriteContinuation(7, true, b[6:])
			w.fr.WritePing(false, [8]byte{1})
		}, []want{{http2.FrameHeaders, 7, "/etcdserverpb.KV/Put", "", false}, {http2.FramePing, 0, "", "", false}}, false},
		{"trailers", func(w *wire) {
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block(":status", "200", "content-type", "application/grpc"), EndHeaders: true})
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: w.block("grpc-status", "5", "grpc-message", "requested lease not found"), EndHeaders: true, EndStream: true})
		}, []want{{http2.FrameHeaders, 1, "", "", false}, {http2.FrameHeaders, 1, "", "5", true}}, false},
		{"a block broken by another stream's CONTINUATION", func(w *wire) {
			b := w.request("/etcdserverpb.KV/Put")
			w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:3]})
			w.fr.WriteContinuation(3, true, b[3:])
		}, nil, true},
		{"a CONTINUATION with no block open", func(w *wire) {
			w.fr.WriteContinuation(1, true, w.request("/etcdserverpb.KV/Put"))
		}, nil, true},
		{"a frame cut short", func(w *wire) {
			w.fr.WriteData(1, false, []byte("abc"))
			w.buf.Truncate(w.buf.Len() - 1)
		}, nil, true},
	}
	for _, tt := range tests {
		w := newWire()
		tt.write(w)
		sent := append([]byte(nil), w.buf.Bytes()...)
		r := NewReader(&w.buf)
		var raw []byte
		for i, wf := range tt.want {
			f, err := r.Next()
			if err != nil {
				t.Fatalf("%s: frame %d: %v", tt.name, i, err)
			}
			if f.Type != wf.typ || f.Stream != wf.stream || f.Field(":path") != wf.path || f.Field("grpc-status") != wf.status || f.EndStream() != wf.endStream {
				t.Errorf("%s: frame %d: %v on %d, path %q, status %q, end %v; want %+v", tt.name, i, f.Type, f.Stream, f.Field(":path"), f.Field("grpc-status"), f.EndStream(), wf)
			}
			raw = append(raw, f.Raw...)
		}
		_, err := r.Next()
		switch {
		case tt.err && (err == nil || errors.Is(err, io.EOF)):
			t.Errorf("%s: %v, want an error", tt.name, err)
		case !tt.err && !errors.Is(err, io.EOF):
			t.Errorf("%s: after the frames: %v, want EOF", tt.name, err)
		case !tt.err && !bytes.Equal(raw, sent):
			t.Errorf("%s: the frames' bytes differ from those sent", tt.name)
		}
	}
}

// TestStatus: trailers say OK, or a StatusError with the code and
// message; trailers without a code are UNKNOWN.
func TestStatus(t *testing.T) {
	tests := []struct {
		fields []hpack.HeaderField
		want   error
	}{
		{[]hpack.HeaderField{{Name: "grpc-status", Value: "0"}}, nil},
		{[]hpack.HeaderField{{Name: "grpc-status", Value: "9"}, {Name: "grpc-message", Value: "etcdserver: key not found"}}, StatusError{9, "etcdserver: key not found"}},
		{nil, StatusError{Code: 2}},
	}
	for _, tt := range tests {
		if got := Status(Frame{Fields: tt.fields}); got != tt.want {
			t.Errorf("Status(%v) = %v, want %v", tt.fields, got, tt.want)
		}
	}
}

// TestFrameData: a DATA frame's data, its padding left out.
func TestFrameData(t *testing.T) {
	header := func(typ http2.FrameType, flags http2.Flags, payload ...byte) Frame {
		raw := append([]byte{0, 0, byte(len(payload)), byte(typ), byte(flags), 0, 0, 0, 1}, payload...)
		return Frame{Raw: raw, Type: typ, Flags: flags, Stream: 1}
	}
	for _, tt := range []struct {
		name string
		f    Frame
		want []byte
	}{
		{"plain", header(http2.FrameData, 0, 1, 2, 3), []byte{1, 2, 3}},
		{"padded", header(http2.FrameData, http2.FlagDataPadded, 2, 1, 2, 0, 0), []byte{1, 2}},
		{"padding past the end", header(http2.FrameData, http2.FlagDataPadded, 9, 1), nil},
		{"a header block", header(http2.FrameHeaders, 0, 1, 2), nil},
	} {
		if got := tt.f.Data(); !bytes.Equal(got, tt.want) {
			t.Errorf("%s: Data() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
