// Package resp reads and writes RESP, Redis's protocol (RESP2 and RESP3):
// the commands a client sends and the values a server answers, each kept
// as the bytes it came as. It is pure, and imports nothing of locklab:
// package program/relay reads a lock program's commands and their replies
// with it, and package service/redis/sentinel the replies of the
// Sentinels it relays, whose addresses it rewrites (Value.Append).
package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on what a reader accepts, as Redis's own (proto-max-bulk-len
// 512 MB, inline requests of 64 KB), so that garbage cannot make it
// allocate without bound.
const (
	maxBulk  = 512 << 20
	maxCount = 1 << 24 // elements of one aggregate
	// MaxDepth is the deepest nesting of aggregates a reader accepts.
	MaxDepth  = 64
	maxInline = 64 << 10
)

// ProtocolError is a value that cannot be parsed, as Redis would not
// parse it.
type ProtocolError string

func (e ProtocolError) Error() string { return string(e) }

// Value is one RESP value as read, kept as its bytes so that it can be
// forwarded exactly as it came.
type Value struct {
	Kind  byte   // the RESP type byte: + - : $ * and RESP3's _ , # ! = ( % ~ > |
	Raw   []byte // every byte of it, attributes included
	Str   string // a simple, bulk, verbatim string, an error, a double or a big number
	Num   int64  // an integer
	Null  bool   // a null: _, $-1 or *-1
	Elems []Value
}

// ReadCommand reads one command a client sent: an array of bulk strings,
// or an inline command (words separated by spaces; quotes are not parsed).
// raw is what to send to Redis: the array as it came, an inline command
// encoded as an array. Blank inline lines are skipped, as Redis does.
func ReadCommand(r *bufio.Reader) (args []string, raw []byte, err error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return nil, nil, err
		}
		if b[0] != '*' {
			line, err := ReadLine(r, maxInline)
			if err != nil {
				return nil, nil, err
			}
			args = strings.Fields(strings.TrimRight(string(line), "\r\n"))
			if len(args) == 0 {
				continue
			}
			return args, EncodeCommand(args), nil
		}
		v, err := ReadValue(r)
		if err != nil {
			return nil, nil, err
		}
		if v.Null || len(v.Elems) == 0 {
			continue // Redis ignores an empty or null array
		}
		for _, e := range v.Elems {
			if e.Kind != '$' || e.Null {
				return nil, nil, ProtocolError(fmt.Sprintf("expected a bulk string in a command, got %q", e.Kind))
			}
			args = append(args, e.Str)
		}
		return args, v.Raw, nil
	}
}

// EncodeCommand is args as a RESP array of bulk strings.
func EncodeCommand(args []string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// ReadValue reads one RESP2 or RESP3 value. A RESP3 attribute (|) is read
// with the value it annotates and returned as that value. Streamed strings
// and aggregates (a length of ?), which Redis never sends, are refused.
func ReadValue(r *bufio.Reader) (Value, error) {
	var raw []byte
	v, err := readInto(r, &raw, 0)
	v.Raw = raw
	return v, err
}

func readInto(r *bufio.Reader, raw *[]byte, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, ProtocolError("aggregates nested too deep")
	}
	line, err := ReadLine(r, maxInline)
	if err != nil {
		return Value{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Value{}, ProtocolError(fmt.Sprintf("line %q is empty or does not end with CRLF", clip(string(line))))
	}
	*raw = append(*raw, line...)
	v := Value{Kind: line[0]}
	body := string(line[1 : len(line)-2])
	switch v.Kind {
	case '+', '-', ',', '(':
		v.Str = body
	case ':':
		if v.Num, err = strconv.ParseInt(body, 10, 64); err != nil {
			return v, ProtocolError(fmt.Sprintf("bad integer %q", body))
		}
	case '_':
		v.Null = true
	case '#':
		if body != "t" && body != "f" {
			return v, ProtocolError(fmt.Sprintf("bad boolean %q", body))
		}
		v.Str = body
	case '$', '!', '=':
		n, err := length(body, maxBulk)
		if err != nil {
			return v, err
		}
		if n < 0 {
			v.Null = true
			break
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(r, data); err != nil {
			return v, Unexpected(err)
		}
		if data[n] != '\r' || data[n+1] != '\n' {
			return v, ProtocolError("a bulk string does not end with CRLF")
		}
		*raw = append(*raw, data...)
		v.Str = string(data[:n])
	case '*', '~', '>', '%', '|':
		n, err := length(body, maxCount)
		if err != nil {
			return v, err
		}
		if n < 0 {
			v.Null = true
			break
		}
		if v.Kind == '%' || v.Kind == '|' {
			n *= 2 // a map holds a key and a value per entry
		}
		for range n {
			e, err := readInto(r, raw, depth+1)
			if err != nil {
				return v, err
			}
			if v.Kind != '|' {
				v.Elems = append(v.Elems, e)
			}
		}
		if v.Kind == '|' {
			// An attribute annotates the value that follows: that is the reply.
			return readInto(r, raw, depth)
		}
	default:
		return v, ProtocolError(fmt.Sprintf("unknown RESP type %q", v.Kind))
	}
	return v, nil
}

// length parses the length of a bulk string or aggregate: -1 for a null.
func length(s string, limit int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 || n > limit {
		return 0, ProtocolError(fmt.Sprintf("bad length %q", s))
	}
	return n, nil
}

// ReadLine reads through the next LF, at most limit bytes.
func ReadLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > limit {
			return nil, ProtocolError("line too long")
		}
		if err == nil {
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 0 {
				return nil, Unexpected(err)
			}
			return nil, err
		}
	}
}

// Unexpected turns an EOF inside a value into io.ErrUnexpectedEOF.
func Unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Append appends v encoded anew from its fields, not from Raw: how a
// value whose strings were changed is sent on. An attribute read with it
// is left out, and a map or an attribute-free value comes out as it came.
func (v Value) Append(b []byte) []byte {
	switch {
	case v.Null && v.Kind == '_':
		return append(b, "_\r\n"...)
	case v.Null:
		return fmt.Appendf(b, "%c-1\r\n", v.Kind)
	}
	switch v.Kind {
	case ':':
		return fmt.Appendf(b, ":%d\r\n", v.Num)
	case '$', '!', '=':
		return fmt.Appendf(b, "%c%d\r\n%s\r\n", v.Kind, len(v.Str), v.Str)
	case '*', '~', '>', '%':
		n := len(v.Elems)
		if v.Kind == '%' {
			n /= 2 // a map counts its entries, each a key and a value
		}
		b = fmt.Appendf(b, "%c%d\r\n", v.Kind, n)
		for _, e := range v.Elems {
			b = e.Append(b)
		}
		return b
	}
	return fmt.Appendf(b, "%c%s\r\n", v.Kind, v.Str) // + - , ( #
}

// clip shortens what a peer sent to fit in one line of an error.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
