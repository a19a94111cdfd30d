package relay

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/locklab/locklab/resp"
)

// TestFrontRetargets: a Front's address stays while each run's relay
// attaches to it in turn, forwarding to that run's upstream alone; a
// connection opened in one run is closed at its end, and none is served
// between two runs.
func TestFrontRetargets(t *testing.T) {
	_, c := singleClient(t)
	f, err := NewFront(1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	addr := f.Addrs()[0]
	ping := func(conn net.Conn) (string, error) {
		if _, err := io.WriteString(conn, "*1\r\n$4\r\nPING\r\n"); err != nil {
			return "", err
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		return bufio.NewReader(conn).ReadString('\n')
	}
	var last net.Conn
	for _, run := range []string{"one", "two"} {
		r, err := Attach(f, c, []string{answering(t, "+"+run+"\r\n")}, Redis)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Attach(f, c, []string{"127.0.0.1:1"}, Redis); err == nil {
			t.Errorf("run %s: a second relay attached to a front in use", run)
		}
		if last != nil {
			if got, err := ping(last); err == nil {
				t.Errorf("run %s: the previous run's connection still answers %q", run, got)
			}
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if got, err := ping(conn); err != nil || got != "+"+run+"\r\n" {
			t.Errorf("run %s: PING answered %q, %v; want +%s from this run's upstream", run, got, err, run)
		}
		r.Close()
		last = conn
		between, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ping(between); err == nil {
			t.Errorf("after run %s: a connection between runs answered %q", run, got)
		}
		between.Close()
	}
}

// answering is the address of a server that answers every command of
// every connection with reply, until the test ends.
func answering(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					if _, _, err := resp.ReadCommand(r); err != nil {
						return
					}
					if _, err := io.WriteString(conn, reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
