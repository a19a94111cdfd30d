package memcached

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Bounds of an eviction: how many items a writer may write, in batches of
// evictBatch between two looks at the lock's item. With Memory of 2 MB a
// lock's size class holds some 20,000 items; the bound is ten times that.
const (
	evictBatch = 1000
	evictMax   = 200_000
	evictCap   = 10 * time.Second
)

// Evict writes items of the size of key's item, on a connection of its
// own past any link, until the server's LRU evicts key's item
// (cluster.Evicter). Every look at the item (meta get with u) leaves it
// where it is in the LRU, so the look does not keep it alive; the
// writer's items share the item's size class, which is where memcached
// evicts to make room.
func (d *deployment) Evict(ctx context.Context, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, evictCap)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", d.node.Addr())
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	rw := bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn))
	size, err := itemSize(rw, key)
	if err != nil {
		return 0, err
	}
	value := strings.Repeat("x", size)
	keys := fillKeys(key)
	for written := 0; written < evictMax; {
		for range evictBatch {
			fmt.Fprintf(rw, "set %s 0 0 %d noreply\r\n%s\r\n", keys(), size, value)
			written++
		}
		left, err := look(rw, "mg "+key+" u")
		if err != nil {
			return written, err
		}
		if strings.HasPrefix(left, "EN") {
			return written, nil
		}
	}
	return evictMax, fmt.Errorf("the item outlived %d writes of its size", evictMax)
}

// itemSize is the size of key's value, read without bumping it.
func itemSize(rw *bufio.ReadWriter, key string) (int, error) {
	reply, err := look(rw, "mg "+key+" s u")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(reply)
	if len(fields) == 0 || fields[0] == "EN" {
		return 0, errors.New("no item to evict: the lock is not held")
	}
	if len(fields) < 2 || fields[0] != "HD" || !strings.HasPrefix(fields[1], "s") {
		return 0, fmt.Errorf("unexpected reply %q", reply)
	}
	return strconv.Atoi(fields[1][1:])
}

// look sends line and reads its one-line reply.
func look(rw *bufio.ReadWriter, line string) (string, error) {
	if _, err := rw.WriteString(line + "\r\n"); err != nil {
		return "", err
	}
	if err := rw.Flush(); err != nil {
		return "", err
	}
	reply, err := rw.ReadString('\n')
	return strings.TrimRight(reply, "\r\n"), err
}

// fillKeys returns the writer's keys, one new key at each call, each as
// long as key (three characters at least, for enough of them) and never
// key itself: an item's size, which picks its slab class, counts its
// key's length, and the items must be of the lock's class to evict it.
func fillKeys(key string) func() string {
	const first, last = '!', '~' // printable, no space: any may be in a key
	width := max(len(key), 3)
	n := 0
	return func() string {
		for {
			b := make([]byte, width)
			for i, v := width-1, n; i >= 0; i-- {
				b[i] = byte(first + v%(last-first+1))
				v /= last - first + 1
			}
			n++
			if string(b) != key {
				return string(b)
			}
		}
	}
}
