package schedule

import (
	"slices"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/fault"
)

// drawnOn are the topologies kind k is drawn on.
func drawnOn(k kind) []cluster.Topology {
	var ts []cluster.Topology
	for _, t := range cluster.Topologies() {
		if len((Space{only: []string{k.Name}}).kindsFor([]kind{k}, ReplayVersion, t)) > 0 {
			ts = append(ts, t)
		}
	}
	return ts
}

// faultKind is the kind of fault called name, and whether fault.Kinds has it.
func faultKind(name string) (fault.Kind, bool) {
	kinds := fault.Kinds()
	if i := slices.IndexFunc(kinds, func(k fault.Kind) bool { return k.Name == name }); i >= 0 {
		return kinds[i], true
	}
	return fault.Kind{}, false
}

// TestKindsNameTheirFaults checks each kind's Fault and With as data: kinds
// of fault.Kinds, each able to strike on every topology the kind is drawn
// on (a kind drawn where its fault cannot strike would spoil its runs);
// and every kind of fault.Kinds is some kind's Fault or With, so that a
// new kind of fault has an explore kind that says it draws it.
func TestKindsNameTheirFaults(t *testing.T) {
	named := map[string]bool{}
	for _, k := range allKinds {
		if k.Fault == "" {
			t.Errorf("kind %s names no Fault", k.Name)
		}
		for _, name := range append([]string{k.Fault}, k.With...) {
			named[name] = true
			fk, ok := faultKind(name)
			if !ok {
				t.Errorf("kind %s: fault kind %q is not in fault.Kinds", k.Name, name)
				continue
			}
			for _, topo := range drawnOn(k) {
				if !fk.StrikesOn(topo) {
					t.Errorf("kind %s is drawn on %s, where its fault kind %s cannot strike (services %v, topologies %v)", k.Name, topo, name, fk.Services, fk.Topologies)
				}
			}
		}
	}
	for _, fk := range fault.Kinds() {
		if !named[fk.Name] {
			t.Errorf("fault kind %s is no explore kind's Fault or With: add the kind that draws it at the end of allKinds", fk.Name)
		}
	}
}

// TestKindsDrawTheirFaults draws each kind alone on every topology it is
// drawn on, many seeds, and checks its declared fault kinds against its
// draws: every failpoint and scheduled fault it draws is of its Fault or
// one of its With; its Fault is drawn on every one of those topologies;
// and each of its With is drawn somewhere.
func TestKindsDrawTheirFaults(t *testing.T) {
	const seeds = 200
	for _, k := range allKinds {
		t.Run(k.Name, func(t *testing.T) {
			declared := append([]string{k.Fault}, k.With...)
			drawn := map[string]bool{}
			for _, topo := range drawnOn(k) {
				here := map[string]bool{}
				space := Space{only: []string{k.Name}}
				for seed := int64(1); seed <= seeds; seed++ {
					for _, f := range space.Draw(topo, false, seed).Faults {
						for _, fp := range f.Failpoints {
							here[fp.About().Name] = true
						}
						for _, sf := range f.Scheduled {
							here[sf.Fault.About().Name] = true
						}
					}
				}
				for name := range here {
					drawn[name] = true
					if !slices.Contains(declared, name) {
						t.Errorf("on %s it draws a fault of kind %q, neither its Fault %q nor one of its With %q", topo, name, k.Fault, k.With)
					}
				}
				if !here[k.Fault] {
					t.Errorf("on %s, seeds 1 to %d draw no fault of its kind %q", topo, seeds, k.Fault)
				}
			}
			for _, name := range k.With {
				if !drawn[name] {
					t.Errorf("With names %q, which seeds 1 to %d never draw on any topology", name, seeds)
				}
			}
		})
	}
}
