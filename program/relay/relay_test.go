package relay

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/resp"
	redisservice "github.com/locklab/locklab/service/redis"
)

// readers gives the same bytes whole and one byte per read, so that every
// value is also parsed across split reads.
func readers(s string) map[string]*bufio.Reader {
	return map[string]*bufio.Reader{
		"whole":      bufio.NewReader(strings.NewReader(s)),
		"split":      bufio.NewReader(iotest.OneByteReader(strings.NewReader(s))),
		"small bufs": bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(s)), 16),
	}
}

func TestReadCommand(t *testing.T) {
	set := "*5\r\n$3\r\nSET\r\n$4\r\nlock\r\n$2\r\nc0\r\n$2\r\nNX\r\n$0\r\n\r\n"
	evalsha := "*5\r\n$7\r\nEVALSHA\r\n$40\r\n" + strings.Repeat("a", 40) + "\r\n$1\r\n1\r\n$4\r\nlock\r\n$2\r\nc0\r\n"
	tests := []struct {
		name string
		in   string
		want [][]string // the commands, in order
		raw  []string   // what goes to Redis for each
		err  error      // after the commands: io.EOF, io.ErrUnexpectedEOF or a protocolError
	}{
		{"one array", set, [][]string{{"SET", "lock", "c0", "NX", ""}}, []string{set}, io.EOF},
		{"a pipeline in one write", set + evalsha + "*1\r\n$4\r\nPING\r\n",
			[][]string{{"SET", "lock", "c0", "NX", ""}, {"EVALSHA", strings.Repeat("a", 40), "1", "lock", "c0"}, {"PING"}},
			[]string{set, evalsha, "*1\r\n$4\r\nPING\r\n"}, io.EOF},
		{"binary-safe bulk", "*2\r\n$3\r\nGET\r\n$4\r\na\r\nb\r\n", [][]string{{"GET", "a\r\nb"}},
			[]string{"*2\r\n$3\r\nGET\r\n$4\r\na\r\nb\r\n"}, io.EOF},
		{"inline, re-encoded", "GET lock\r\nping\n", [][]string{{"GET", "lock"}, {"ping"}},
			[]string{"*2\r\n$3\r\nGET\r\n$4\r\nlock\r\n", "*1\r\n$4\r\nping\r\n"}, io.EOF},
		{"blank lines and empty arrays skipped", "\r\n\n*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}},
			[]string{"*1\r\n$4\r\nPING\r\n"}, io.EOF},
		{"cut inside a bulk", "*2\r\n$3\r\nGET\r\n$4\r\nlo", nil, nil, io.ErrUnexpectedEOF},
		{"cut inside a line", "*2\r\n$3", nil, nil, io.ErrUnexpectedEOF},
		{"an integer in a command", "*2\r\n$3\r\nGET\r\n:1\r\n", nil, nil, protocolError("")},
		{"a null bulk in a command", "*2\r\n$3\r\nGET\r\n$-1\r\n", nil, nil, protocolError("")},
		{"a bad length", "*2\r\n$x\r\n", nil, nil, protocolError("")},
		{"a huge length", "*2\r\n$999999999999\r\n", nil, nil, protocolError("")},
		{"a bulk without its CRLF", "*1\r\n$3\r\nGETxx", nil, nil, protocolError("")},
		{"a line without CR", "*1\n$3\r\nGET\r\n", nil, nil, protocolError("")},
	}
	for _, tt := range tests {
		for how, r := range readers(tt.in) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				for i, want := range tt.want {
					args, raw, err := resp.ReadCommand(r)
					if err != nil {
						t.Fatalf("command %d: %v", i, err)
					}
					if !slices.Equal(args, want) {
						t.Errorf("command %d: %q, want %q", i, args, want)
					}
					if string(raw) != tt.raw[i] {
						t.Errorf("command %d sent as %q, want %q", i, raw, tt.raw[i])
					}
				}
				_, _, err := resp.ReadCommand(r)
				wantEnd(t, err, tt.err)
			})
		}
	}
}

func TestReadValue(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		kind    byte
		meaning any
		err     string // a Redis error reply's text
	}{
		{"status", "+OK\r\n", '+', "OK", ""},
		{"error", "-NOSCRIPT No matching script\r\n", '-', nil, "NOSCRIPT No matching script"},
		{"integer", ":1\r\n", ':', int64(1), ""},
		{"negative integer", ":-2\r\n", ':', int64(-2), ""},
		{"bulk", "$2\r\nOK\r\n", '$', "OK", ""},
		{"empty bulk", "$0\r\n\r\n", '$', "", ""},
		{"null bulk", "$-1\r\n", '$', nil, ""},
		{"null array", "*-1\r\n", '*', nil, ""},
		{"nested arrays", "*3\r\n*2\r\n:1\r\n$1\r\na\r\n*0\r\n*1\r\n*1\r\n+x\r\n", '*', nil, ""},
		{"RESP3 null", "_\r\n", '_', nil, ""},
		{"RESP3 true", "#t\r\n", '#', true, ""},
		{"RESP3 false", "#f\r\n", '#', false, ""},
		{"RESP3 double", ",3.14\r\n", ',', nil, ""},
		{"RESP3 big number", "(3492890328409238509324850943850943825024385\r\n", '(', nil, ""},
		{"RESP3 blob error", "!21\r\nSYNTAX invalid syntax\r\n", '!', nil, "SYNTAX invalid syntax"},
		{"RESP3 verbatim", "=15\r\ntxt:Some string\r\n", '=', nil, ""},
		{"RESP3 map", "%2\r\n+first\r\n:1\r\n+second\r\n*2\r\n:2\r\n#f\r\n", '%', nil, ""},
		{"RESP3 set", "~2\r\n+a\r\n+b\r\n", '~', nil, ""},
		{"RESP3 push", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", '>', nil, ""},
		{"RESP3 attribute, then its reply", "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n:1\r\n", ':', int64(1), ""},
	}
	for _, tt := range tests {
		// Each value twice in a row: the reader stops exactly at its end.
		in := tt.in + tt.in
		for how, r := range readers(in) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				for i := range 2 {
					v, err := resp.ReadValue(r)
					if err != nil {
						t.Fatalf("value %d: %v", i, err)
					}
					if string(v.Raw) != tt.in {
						t.Errorf("raw %q, want it as it came: %q", v.Raw, tt.in)
					}
					if v.Kind != tt.kind {
						t.Errorf("kind %q, want %q", v.Kind, tt.kind)
					}
					m, err := meaning(v)
					if m != tt.meaning {
						t.Errorf("meaning %#v, want %#v", m, tt.meaning)
					}
					if got := ""; err != nil {
						got = err.Error()
						if got != tt.err {
							t.Errorf("error %q, want %q", got, tt.err)
						}
					} else if tt.err != "" {
						t.Errorf("no error, want %q", tt.err)
					}
				}
				if _, err := resp.ReadValue(r); !errors.Is(err, io.EOF) {
					t.Errorf("after the values: %v, want EOF", err)
				}
			})
		}
	}
	for _, bad := range []string{"?1\r\n", ":x\r\n", "#y\r\n", "$?\r\n", "*?\r\n", "\r\n", strings.Repeat("*1\r\n", resp.MaxDepth+2) + ":1\r\n"} {
		if _, err := resp.ReadValue(bufio.NewReader(strings.NewReader(bad))); !errors.As(err, new(protocolError)) {
			t.Errorf("%q: %v, want a protocol error", bad, err)
		}
	}
}

// TestRelay puts a relay between go-redis and a real redis-server: single
// commands, a pipeline, RESP3, an inline command, Pub/Sub (a plain pipe
// from SUBSCRIBE on), and a crash that drops every connection.
func TestRelay(t *testing.T) {
	ctx := context.Background()
	cl, c := singleClient(t)
	r, err := Listen(c, []string{c.Endpoints().Redis}, Redis)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr := r.Addrs()[0]

	for _, proto := range []int{2, 3} {
		rc := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, MaxRetries: -1})
		if err := rc.Set(ctx, "lock", "c0", time.Minute).Err(); err != nil {
			t.Fatalf("RESP%d SET: %v", proto, err)
		}
		big := strings.Repeat("x", 200<<10) // beyond every buffer: split reads
		cmds, err := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Get(ctx, "lock")
			p.Set(ctx, "big", big, 0)
			p.Get(ctx, "big")
			p.Eval(ctx, "return {1, {2, 'x'}, redis.status_reply('OK')}", []string{"lock"})
			p.HSet(ctx, "h", "a", "1")
			p.HGetAll(ctx, "h")
			p.Do(ctx, "no-such-command")
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("RESP%d pipeline: %v, want the unknown command's error", proto, err)
		}
		if len(cmds) != 7 || cmds[0].(*redis.StringCmd).Val() != "c0" || cmds[2].(*redis.StringCmd).Val() != big ||
			cmds[5].(*redis.MapStringStringCmd).Val()["a"] != "1" {
			t.Errorf("RESP%d pipeline: replies out of step: %v", proto, cmds[:2])
		}
		rc.Close()
	}

	// An inline command, as typed into telnet.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET lock\r\n"))
	if v, err := resp.ReadValue(bufio.NewReader(conn)); err != nil || v.Str != "c0" {
		t.Errorf("inline GET: %q, %v", v.Str, err)
	}
	conn.Close()

	// Pub/Sub: replies no longer pair with commands; the relay pipes.
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rc.Close()
	sub := rc.Subscribe(ctx, "ch")
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if err := rc.Publish(ctx, "ch", "hi").Err(); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	msg, err := sub.ReceiveMessage(mctx)
	cancel()
	if err != nil || msg.Payload != "hi" {
		t.Errorf("message: %v, %v", msg, err)
	}
	sub.Close()

	// After a crash no command reaches Redis: the relay closes the
	// connection instead. (A program's crash also kills the process, whose
	// connections its relay drops: Drop, from package program.)
	conn, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("PING\r\n"))
	br := bufio.NewReader(conn)
	if v, err := resp.ReadValue(br); err != nil || v.Str != "PONG" {
		t.Fatalf("PING: %q, %v", v.Str, err)
	}
	c.Crash("test")
	conn.Write([]byte("SET after crash\r\n"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := resp.ReadValue(br); !errors.Is(err, io.EOF) {
		t.Errorf("after the crash: %v, want the connection closed", err)
	}
	admin := redis.NewClient(&redis.Options{Addr: cl.LockNodes()[0].Addr()})
	defer admin.Close()
	if n, err := admin.Exists(ctx, "after").Result(); err != nil || n != 0 {
		t.Errorf("a command sent after the crash reached Redis")
	}

	// Closed, the relay has waited for all its goroutines and listens no more.
	r.Close()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("the relay still listens on %s after close", addr)
	}
}

// wantEnd checks how a reading ended: with a protocol error when want is
// one, else with want itself.
func wantEnd(t *testing.T, err, want error) {
	t.Helper()
	var perr protocolError
	switch {
	case errors.As(want, &perr):
		if !errors.As(err, &perr) {
			t.Errorf("end: %v, want a protocol error", err)
		}
	case !errors.Is(err, want):
		t.Errorf("end: %v, want %v", err, want)
	}
}

// singleClient starts the single topology and connects a client to it,
// both closed when t ends; it skips t where redis-server is missing.
func singleClient(t *testing.T) (*cluster.Cluster, *harness.Client) {
	t.Helper()
	ctx := context.Background()
	cl, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: local.Local{}, Service: redisservice.Service{}})
	if errors.Is(err, local.ErrNoRedisServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c, err := harness.Connect(ctx, cl, harness.ClientOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return cl, c
}
