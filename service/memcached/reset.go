package memcached

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// Reset drops every item (cluster.Resetter): flush_all, which a
// connection a run left behind cannot undo, since the server expires
// every item stored before it.
func (d *deployment) Reset(ctx context.Context) error {
	reply, err := Ask(ctx, d.node.Addr(), "flush_all")
	if err != nil {
		return fmt.Errorf("flush_all: %w", err)
	}
	if reply != "OK" {
		return fmt.Errorf("flush_all: %q", reply)
	}
	return nil
}

// Clean reports an item left (cluster.Resetter): the LRU crawler's
// dump of every live item, which leaves out the expired and flushed ones.
func (d *deployment) Clean(ctx context.Context) error {
	keys, err := dumpKeys(ctx, d.node.Addr())
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		return fmt.Errorf("%d items left, %s first", len(keys), keys[0])
	}
	return nil
}

// dumpKeys lists the keys of the live items on the server at addr
// (lru_crawler metadump all), past any link.
func dumpKeys(ctx context.Context, addr string) ([]string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dump the items: %w", err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Second)
	}
	conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("lru_crawler metadump all\r\n")); err != nil {
		return nil, fmt.Errorf("dump the items: %w", err)
	}
	var keys []string
	lines := bufio.NewScanner(conn)
	for lines.Scan() {
		line := strings.TrimRight(lines.Text(), "\r")
		switch {
		case line == "END":
			return keys, nil
		case strings.HasPrefix(line, "key="):
			key, _, _ := strings.Cut(strings.TrimPrefix(line, "key="), " ")
			keys = append(keys, key)
		default:
			// BUSY (another dump under way) or an error: no answer.
			return nil, fmt.Errorf("dump the items: %q", line)
		}
	}
	return nil, fmt.Errorf("dump the items: %w", lines.Err())
}
