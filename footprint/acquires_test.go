package footprint

import (
	"testing"
	"time"
)

// TestAcquires: only the requests of an acquire that took the lock teach
// its footprint; a session's lease is learned whenever it comes.
func TestAcquires(t *testing.T) {
	var a Acquires
	set := func(key string) (Footprint, bool) { return Redis([]string{"SET", key, "tok", "NX", "PX", "1000"}) }
	a.Seen(set("seen-outside-an-acquire"))
	a.Begin()
	a.Seen(set("refused"))
	a.End(false)
	if fp, _ := a.Footprint(); fp.Key != "" {
		t.Fatalf("learned %s from requests no acquire that took the lock sent", fp)
	}
	a.Begin()
	a.Seen(set("app:lock"))
	a.Seen(Footprint{}, false)
	a.End(true)
	a.Seen(ZooKeeperSession(4*time.Second), true)
	fp, ambiguous := a.Footprint()
	if fp.Key != "app:lock" || fp.Lease != time.Second || len(ambiguous) > 0 {
		t.Errorf("footprint %s (%q), want app:lock, 1000 ms", fp, ambiguous)
	}
}
