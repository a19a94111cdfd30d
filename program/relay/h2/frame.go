// Package h2 relays one gRPC connection over cleartext HTTP/2 (RFC 9113,
// https://www.rfc-editor.org/rfc/rfc9113) between a program and its
// server, so that a unary call can be held, and its reply withheld, while
// the connection's streaming calls go on. It reads frames both ways and
// decodes each header block with the direction's HPACK state (RFC 7541,
// https://www.rfc-editor.org/rfc/rfc7541), to learn a request's method
// (its :path) and a reply's end (trailers, which carry grpc-status: gRPC's
// https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md), and it
// forwards every frame's bytes unchanged: the HPACK tables live at both
// ends, so header blocks are never reordered nor dropped within a
// direction. Package relay names the calls and runs them through a
// client's failpoints; this package knows nothing of either.
package h2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// maxBlock bounds a header block the relay gathers (a HEADERS frame and
// its CONTINUATIONs), so that garbage cannot make it allocate without
// bound; a frame's own length is bounded by its 24 bits.
const maxBlock = 1 << 20

// maxTable bounds the HPACK dynamic table an encoder may ask for: the
// peer's SETTINGS_HEADER_TABLE_SIZE bounds it (RFC 9113 §6.5.2), which the
// relay forwards and need not enforce, the peer does.
const maxTable = 1 << 20

// Frame is one HTTP/2 frame as read, or one whole header block (a HEADERS
// frame and the CONTINUATION frames that end it), with every byte of it.
type Frame struct {
	Raw    []byte              // every byte, 9-byte headers included
	Type   http2.FrameType     // a header block's is FrameHeaders (or FramePushPromise)
	Flags  http2.Flags         // the first frame's
	Stream uint32              // the stream it belongs to; 0 for the connection
	Fields []hpack.HeaderField // a header block's fields, decoded
}

// EndStream reports whether f ends its sender's side of its stream: a
// DATA frame or a header block with END_STREAM (RFC 9113 §6.1, §6.2).
func (f Frame) EndStream() bool {
	return (f.Type == http2.FrameData || f.Type == http2.FrameHeaders) && f.Flags.Has(http2.FlagDataEndStream)
}

// Data is what a DATA frame carries, its padding left out; nil for a
// frame of another type, or one whose padding does not fit.
func (f Frame) Data() []byte {
	if f.Type != http2.FrameData || len(f.Raw) < 9 {
		return nil
	}
	d := f.Raw[9:]
	if f.Flags.Has(http2.FlagDataPadded) {
		if len(d) == 0 || int(d[0]) >= len(d) {
			return nil
		}
		d = d[1 : len(d)-int(d[0])]
	}
	return d
}

// Field is the value of the field named name in a header block, or "".
func (f Frame) Field(name string) string {
	for _, hf := range f.Fields {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}

// ReadFrame reads one frame: its 9-byte header (length, type, flags,
// stream: RFC 9113 §4.1), then its payload.
func ReadFrame(r io.Reader) (Frame, error) {
	head := make([]byte, 9)
	if _, err := io.ReadFull(r, head); err != nil {
		return Frame{}, err
	}
	n := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
	raw := make([]byte, 9+n)
	copy(raw, head)
	if _, err := io.ReadFull(r, raw[9:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return Frame{Raw: raw, Type: http2.FrameType(head[3]), Flags: http2.Flags(head[4]),
		Stream: binary.BigEndian.Uint32(head[5:]) & (1<<31 - 1)}, nil
}

// Reader reads one direction of a connection, frame by frame, a header
// block as one Frame whose fields it decodes with that direction's HPACK
// state: every block must pass through it, in order.
type Reader struct {
	r   io.Reader
	dec *hpack.Decoder
}

// NewReader reads frames from r, which starts after the client's preface.
func NewReader(r io.Reader) *Reader {
	dec := hpack.NewDecoder(4096, nil) // the initial size (RFC 7541 §4.2; RFC 9113 §6.5.2)
	dec.SetAllowedMaxDynamicTableSize(maxTable)
	return &Reader{r: r, dec: dec}
}

// Next reads the next frame, or header block, decoded.
func (r *Reader) Next() (Frame, error) {
	f, err := ReadFrame(r.r)
	if err != nil || (f.Type != http2.FrameHeaders && f.Type != http2.FramePushPromise) {
		if err == nil && f.Type == http2.FrameContinuation {
			err = fmt.Errorf("h2: CONTINUATION on stream %d with no header block open", f.Stream)
		}
		return f, err
	}
	fragment, err := blockFragment(f)
	if err != nil {
		return f, err
	}
	block := append([]byte(nil), fragment...)
	for !f.Flags.Has(http2.FlagHeadersEndHeaders) {
		c, err := ReadFrame(r.r)
		if err != nil {
			return f, err
		}
		if c.Type != http2.FrameContinuation || c.Stream != f.Stream {
			return f, fmt.Errorf("h2: a header block on stream %d broken by a frame of type %v on stream %d", f.Stream, c.Type, c.Stream)
		}
		f.Raw, block = append(f.Raw, c.Raw...), append(block, c.Raw[9:]...)
		f.Flags |= c.Flags & http2.FlagContinuationEndHeaders
		if len(block) > maxBlock {
			return f, fmt.Errorf("h2: a header block of over %d bytes", maxBlock)
		}
	}
	f.Fields, err = r.dec.DecodeFull(block)
	return f, err
}

// blockFragment is the header block fragment of a HEADERS or PUSH_PROMISE
// frame: its payload without padding, priority or promised stream (RFC
// 9113 §6.2, §6.6).
func blockFragment(f Frame) ([]byte, error) {
	p := f.Raw[9:]
	pad := 0
	if f.Flags.Has(http2.FlagHeadersPadded) {
		if len(p) < 1 {
			return nil, errors.New("h2: a padded frame with no pad length")
		}
		pad, p = int(p[0]), p[1:]
	}
	skip := 0
	switch {
	case f.Type == http2.FramePushPromise:
		skip = 4
	case f.Flags.Has(http2.FlagHeadersPriority):
		skip = 5
	}
	if len(p) < skip+pad {
		return nil, fmt.Errorf("h2: a header frame of %d bytes with %d of padding", len(f.Raw)-9, pad)
	}
	return p[skip : len(p)-pad], nil
}

// StatusError is a gRPC status other than OK that the server ended a call
// with (its trailers' grpc-status and grpc-message): it answered, with an
// error.
type StatusError struct {
	Code    int
	Message string
}

// Error says the code and the server's message.
func (e StatusError) Error() string {
	return "grpc: status " + strconv.Itoa(e.Code) + ": " + e.Message
}

// Status is the error trailers f say the call ended with: nil for OK, a
// StatusError for another code (or none, which gRPC calls UNKNOWN).
func Status(f Frame) error {
	s := f.Field("grpc-status")
	if s == "0" {
		return nil
	}
	code, err := strconv.Atoi(s)
	if err != nil {
		code = 2 // UNKNOWN
	}
	return StatusError{Code: code, Message: f.Field("grpc-message")}
}
