package fault_test

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/fault"
)

// every is one fault of each type; a new type belongs here too.
var every = []fault.Fault{
	fault.KillMaster{}, fault.CutReplication{}, fault.KillNode{}, fault.ClockJump{}, fault.PauseNode{},
	fault.Partition{Client: 1}, fault.Latency{Client: 1}, fault.BlackHole{Client: 1}, fault.DropConnection{Client: 1},
	fault.ClockSkew{Client: 1}, fault.PreferReplica{}, fault.KillConnection{Client: 1}, fault.ClockJumpServer{},
	fault.KillLeader{}, fault.Evict{},
}

// TestEveryFaultHasAKind checks that each fault type names a kind of
// Kinds (Named panics otherwise) and the client it acts on.
func TestEveryFaultHasAKind(t *testing.T) {
	for _, f := range every {
		a := f.About()
		if a.Name == "" || a.Target == "" || a.Effect == "" {
			t.Errorf("%T: kind %+v lacks a name, a target or an effect", f, a.Kind)
		}
		if want := -1; a.Target == fault.TargetNode && a.Client != want {
			t.Errorf("%T strikes a node but names client %d", f, a.Client)
		}
		if a.Target != fault.TargetNode && a.Name != "cut-replication" && a.Client != 1 {
			t.Errorf("%T strikes client 1 but says client %d", f, a.Client)
		}
	}
}

// TestKinds checks the list itself: names unique, and the classifier's
// ranking of families as it was before the list existed, with the dropped
// connection after the lost reply.
func TestKinds(t *testing.T) {
	var names []string
	for _, k := range fault.Kinds() {
		if slices.Contains(names, k.Name) {
			t.Errorf("kind %q listed twice", k.Name)
		}
		names = append(names, k.Name)
		if k.Family != "" && k.Remedy == "" {
			t.Errorf("kind %q has a family but no remedy", k.Name)
		}
	}
	want := []string{"a failover", "a restart of a lock node", "a clock jump on a lock node", "an eviction of the lock's item", "a killed connection", "a pause of a lock node",
		"a client pause", "a client partition", "a slow network", "a lost reply", "a dropped connection",
		"a skewed client clock", "a client crash", "slow work"}
	if got := fault.Families(); !slices.Equal(got, want) {
		t.Errorf("Families() = %q\nwant %q", got, want)
	}
}

func TestNamedPanicsOnUnknown(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Named(\"no-such-kind\") did not panic")
		}
	}()
	fault.Named("no-such-kind")
}
