package fault_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
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
		if a.Struck.Type == "" {
			t.Errorf("%T does not say what it strikes", f)
		}
	}
}

// TestStruck checks what each fault says it strikes, the data the history
// records in place of its label: the kind of thing and the lock nodes.
func TestStruck(t *testing.T) {
	tests := []struct {
		f    fault.Fault
		want history.Target
	}{
		{fault.Partition{Client: 1, Nodes: []int{3, 4}}, history.Target{Type: history.TargetLink, Nodes: []int{3, 4}}},
		{fault.Partition{Client: 1}, history.Target{Type: history.TargetLink}}, // every node: the record names them
		{fault.Latency{Client: 1, Nodes: []int{0}}, history.Target{Type: history.TargetLink, Nodes: []int{0}}},
		{fault.BlackHole{Client: 1}, history.Target{Type: history.TargetLink}},
		{fault.DropConnection{Client: 1}, history.Target{Type: history.TargetConnection}},
		{fault.KillConnection{Client: 1}, history.Target{Type: history.TargetConnection}},
		{fault.ClockSkew{Client: 1}, history.Target{Type: history.TargetClient}},
		{fault.KillNode{Node: 2}, history.Target{Type: history.TargetNode, Nodes: []int{2}}},
		{fault.PauseNode{Node: 1}, history.Target{Type: history.TargetNode, Nodes: []int{1}}},
		{fault.ClockJump{Node: 2}, history.Target{Type: history.TargetNode, Nodes: []int{2}}},
		{fault.ClockJumpServer{Node: 0}, history.Target{Type: history.TargetNode, Nodes: []int{0}}},
		{fault.ClockJumpServer{Node: fault.EveryServer}, history.Target{Type: history.TargetNode}},
		{fault.PreferReplica{Node: 2}, history.Target{Type: history.TargetNode, Nodes: []int{2}}},
		{fault.CutReplication{Replicas: []int{1, 2}}, history.Target{Type: history.TargetLink, Nodes: []int{1, 2}}},
		{fault.KillMaster{Also: []int{1}}, history.Target{Type: history.TargetNode, Nodes: []int{1}, Role: "master"}},
		{fault.KillLeader{}, history.Target{Type: history.TargetNode, Role: "leader"}},
		{fault.Evict{}, history.Target{Type: history.TargetNode}}, // the one server: the record names it
	}
	for _, tt := range tests {
		if got := tt.f.About().Struck; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%#v strikes %+v, want %+v", tt.f, got, tt.want)
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
