package zookeeper_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/zookeeper"
)

// TestWatchLock: the watcher records each child of the lock's parent
// made and gone, with the client its data names and the session it was
// ephemeral to; a node gone with its session's end says whose it was.
func TestWatchLock(t *testing.T) {
	ctx := context.Background()
	cl := startEnsemble(t)
	h, err := history.New("")
	if err != nil {
		t.Fatal(err)
	}
	stop := service.WatchLock(ctx, cl.Deployment(), h, "lock")
	defer stop()
	admin := zookeeper.SetOf(cl).Admin()
	acl := zk.WorldACL(zk.PermAll)
	parent := zookeeper.LockRoot + "/lock"
	for _, p := range []string{zookeeper.LockRoot, parent} {
		if _, err := admin.Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	// Each step waits for the watcher to record the one before: two
	// changes between its reads would be one difference.
	await := func(n int) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := cluster.PollUntil(wctx, "the watcher's events", func(context.Context) (string, error) {
			if got := len(h.Ops()); got < n {
				return fmt.Sprintf("%d events of %d", got, n), nil
			}
			return "", nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	s, _, err := zk.Connect(zookeeper.SetOf(cl).Endpoints(), 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.Create(parent+"/held-", []byte("client 3, acquire 1"), zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		t.Fatal(err)
	}
	session := fmt.Sprintf("%#x", s.SessionID())
	await(1)
	if _, err := admin.Create(parent+"/other", []byte("not a client's"), 0, acl); err != nil {
		t.Fatal(err)
	}
	await(2)
	if err := admin.Delete(parent+"/other", -1); err != nil {
		t.Fatal(err)
	}
	await(3)
	s.Close() // the session ends, and its node with it
	await(4)
	stop()
	type seen struct {
		key, event, session string
		owner               int
	}
	var got []seen
	for _, op := range h.Ops() {
		if op.Kind != history.KindServer || op.Server == nil || op.Call > op.Return {
			t.Fatalf("not a server event: %+v", op)
		}
		got = append(got, seen{op.Key, op.Server.Event, op.Server.Session, op.Server.Owner})
	}
	want := []seen{{held, "create", session, 3}, {parent + "/other", "create", "", -1}, {parent + "/other", "delete", "", -1}, {held, "delete", session, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("server events %+v, want %+v", got, want)
	}
	if err := admin.Delete(parent, -1); err != nil {
		t.Error(err)
	}
}

// TestWatchLockNoServer: a watcher whose first read fails (every server
// stopped) returns that error, at once: it once waited for a second
// answer to that read, for ever, and hung its run.
func TestWatchLockNoServer(t *testing.T) {
	cl := startEnsemble(t)
	h, err := history.New("")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Deployment().Stop(); err != nil {
		t.Fatal(err)
	}
	w, ok := cl.Deployment().(service.LockWatcher)
	if !ok {
		t.Fatal("the ensemble is no service.LockWatcher")
	}
	done := make(chan error, 1)
	go func() {
		stop, err := w.WatchLock(context.Background(), "lock", h)
		if err == nil {
			stop()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a watch of stopped servers started")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no return within 30 s")
	}
}
