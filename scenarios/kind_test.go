package scenarios_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
	redisservice "github.com/locklab/locklab/service/redis"
)

// noExclusion is a lock that excludes nothing between processes: its
// acquire always succeeds. It still writes the key on every lock node, as
// a lock does, so that the failpoints at its commands fire.
type noExclusion struct {
	c *harness.Client
	n int
}

func (l *noExclusion) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.n++
	token := fmt.Sprintf("c%d-%d", l.c.ID(), l.n)
	for _, node := range redisservice.Nodes(l.c) {
		node.Set(ctx, key, token, l.c.TTL()) // refused or not, it goes ahead
	}
	return &everywhere{nodes: redisservice.Nodes(l.c), key: key}, nil
}

type everywhere struct {
	nodes []*redis.Client
	key   string
}

func (e *everywhere) Release(ctx context.Context) error {
	for _, node := range e.nodes {
		node.Del(ctx, e.key)
	}
	return nil
}

func (*everywhere) Token() uint64 { return 0 }

// processMutex is the first stage of seed 003: a mutex inside one process,
// which excludes nothing once the service runs twice.
type processMutex struct{ mu sync.Mutex }

func (l *processMutex) Acquire(ctx context.Context, key string) (harness.Lease, error) {
	l.mu.Lock()
	return l, nil
}

func (l *processMutex) Release(ctx context.Context) error {
	l.mu.Unlock()
	return nil
}

func (*processMutex) Token() uint64 { return 0 }

// TestNoExclusionIsOwn puts locks that exclude nothing between processes
// through the scenarios whose faults could excuse an overlap (a failover,
// a node restarted empty or jumping its clock, a paused holder). Their
// holders overlap before and between the faults, so the history alone
// must call their failures own: no reference run is allowed.
func TestNoExclusionIsOwn(t *testing.T) {
	t.Parallel()
	locks := []struct {
		name string
		new  harness.NewLocker
	}{
		{"always succeeds", func(c *harness.Client) harness.Locker { return &noExclusion{c: c} }},
		{"process mutex", func(*harness.Client) harness.Locker { return &processMutex{} }},
	}
	var names []string
	for _, s := range scenarios.All() {
		if s.Name == "failover" || s.Name == "failover-wait" || s.Topology == "redlock" {
			names = append(names, s.Name)
		}
	}
	for _, l := range locks {
		for _, name := range names {
			if l.name == "process mutex" && name != "failover" && name != "failover-wait" {
				continue // the redlock runs need a lock that sends commands for their failpoints
			}
			t.Run(l.name+"/"+name, func(t *testing.T) {
				t.Parallel() // a run the machine stalls is unknown, and made again
				var res *runner.Result
				for try := 1; ; try++ {
					var err error
					res, err = scenarios.Run(context.Background(), name, l.new, runner.Options{ReferenceRuns: -1})
					if err != nil {
						t.Fatal(err)
					}
					if lock := verdictOf(res, checker.CheckLock); lock.Verdict != checker.Unknown || try == 2 {
						break
					}
					t.Logf("try %d: lock unknown: %s", try, verdictOf(res, checker.CheckLock).Detail)
				}
				if lock := verdictOf(res, checker.CheckLock); lock.Verdict != checker.Illegal {
					t.Fatalf("lock %s (%s): holders that exclude nothing were not caught", lock.Verdict, lock.Detail)
				}
				for _, c := range res.Checks {
					if c.Verdict == checker.Illegal && c.Kind != checker.Own {
						t.Errorf("%s illegal is of kind %q, want own: %s", c.Checker, c.Kind, c.KindWhy)
					}
				}
				t.Logf("lock: %s", verdictOf(res, checker.CheckLock).KindWhy)
			})
		}
	}
}

func verdictOf(res *runner.Result, checkerName string) checker.Check {
	for _, c := range res.Checks {
		if c.Checker == checkerName {
			return c
		}
	}
	return checker.Check{Checker: checkerName, Verdict: checker.Unknown}
}

// TestKillConnectionJudgedByWhatItDid: a killed connection is a loss only
// for a lock that lived in its session. A row lock with no renewal whose
// row expires under slow work is robbed by its own expiry, whatever
// happened to its connection: own, as its renewing twin (the reference)
// passes; GET_LOCK, freed by the server with the connection, is inherent.
func TestKillConnectionJudgedByWhatItDid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lock string
		want checker.Kind
	}{
		{"row-cleanup", checker.Own},
		{"get-lock", checker.Inherent},
	} {
		t.Run(tc.lock, func(t *testing.T) {
			t.Parallel()
			var lock checker.Check
			for try := 1; try <= 3; try++ { // a run the machine stalls is unknown: made again
				l, err := locks.Lookup(tc.lock)
				if err != nil {
					t.Fatal(err)
				}
				res, err := scenarios.Run(context.Background(), "kill-connection-sql", l.New, runner.Options{Lock: tc.lock, Reference: l.ReferenceOn(cluster.MariaDBTopology).New})
				if err != nil {
					t.Fatal(err)
				}
				if lock = verdictOf(res, checker.CheckLock); lock.Verdict != checker.Unknown {
					break
				}
			}
			if lock.Verdict != checker.Illegal || lock.Kind != tc.want {
				t.Errorf("lock %s (%s), kind %q (%s); want illegal, %s", lock.Verdict, lock.Detail, lock.Kind, lock.KindWhy, tc.want)
			}
		})
	}
}

// TestRedlockNoElapsedIsOwn: a Redlock that ignores the time its acquire
// took (locks.Tests' redlock-no-elapsed), on real servers whose nodes 3
// and 4 pause while it waits for them, counts keys that expired before its
// acquire returned. The history alone, node by node, calls that its own,
// though paused nodes are in the run: no reference run is allowed.
func TestRedlockNoElapsedIsOwn(t *testing.T) {
	t.Parallel()
	l, err := locks.Lookup("redlock-no-elapsed")
	if err != nil {
		t.Fatal(err)
	}
	var lock checker.Check
	for try := 1; ; try++ {
		res, err := scenarios.Run(context.Background(), "redlock-slow-nodes", l.New, runner.Options{ReferenceRuns: -1})
		if err != nil {
			t.Fatal(err)
		}
		// A run the loaded machine stalled, or whose pause struck no
		// acquire that got its majority, is made again, at most twice.
		if lock = verdictOf(res, checker.CheckLock); lock.Verdict == checker.Illegal || try == 3 {
			break
		}
		t.Logf("try %d: lock %s: %s", try, lock.Verdict, lock.Detail)
	}
	if lock.Verdict != checker.Illegal {
		t.Fatalf("lock %s (%s): the elapsed-time bug was not caught", lock.Verdict, lock.Detail)
	}
	if lock.Kind != checker.Own || !strings.Contains(lock.KindWhy, "before its acquire's last reply") {
		t.Errorf("lock illegal of kind %q (%s), want own: a node whose key expired before its acquire's last reply", lock.Kind, lock.KindWhy)
	}
	t.Logf("lock: %s", lock.KindWhy)
}
