package fault_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
)

// samples are, by the name of their kind, a fault of each type and a
// failpoint of each action that is of a kind of its own: a new kind fails
// TestEveryKindHasASample until it has a sample here, and a new fault type
// fails TestEveryFaultTypeHasASample, whatever kind it names.
var samples = map[string][]interface{ About() fault.About }{
	"kill-master":     {fault.KillMaster{}},
	"cut-replication": {fault.CutReplication{}},
	"kill-node":       {fault.KillNode{}},
	"clock-jump":      {fault.ClockJump{}, fault.ClockJumpServer{}},
	"evict":           {fault.Evict{}},
	"kill-connection": {fault.KillConnection{Client: 1}},
	"pause-node":      {fault.PauseNode{}},
	"pause":           {failpoint.Point{Name: failpoint.CriticalSection, Client: 1, Action: failpoint.Pause(time.Second)}},
	"partition":       {fault.Partition{Client: 1}},
	"latency":         {fault.Latency{Client: 1}},
	"black-hole":      {fault.BlackHole{Client: 1}},
	"command-delay":   {failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseRelease, 1), Client: 1, Action: failpoint.Sleep(time.Second)}},
	"drop-reply":      {failpoint.Point{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 1, Action: failpoint.DropReply()}},
	"drop-connection": {fault.DropConnection{Client: 1}},
	"clock-skew":      {fault.ClockSkew{Client: 1}},
	"crash":           {failpoint.Point{Name: failpoint.Acquired, Client: 1, Action: failpoint.Crash()}},
	"slow-work":       {failpoint.Point{Name: failpoint.CriticalSection, Client: 1, Action: failpoint.Sleep(time.Second)}},
	"kill-leader":     {fault.KillLeader{}},
	"busy-pool":       {failpoint.Point{Name: failpoint.Acquired, Client: 1, Action: failpoint.HoldConn(failpoint.CriticalSection, time.Second)}},
	"prefer-replica":  {fault.PreferReplica{}},
}

// TestEveryKindHasASample checks that samples covers Kinds, and that each
// sample says it is of the kind it is filed under (Named panics on a kind
// not in Kinds), with a target, an effect, the client it acts on and what
// it strikes.
func TestEveryKindHasASample(t *testing.T) {
	for _, k := range fault.Kinds() {
		if len(samples[k.Name]) == 0 {
			t.Errorf("kind %q has no sample in samples: add a fault (or failpoint) of it", k.Name)
		}
	}
	for name, list := range samples {
		for _, s := range list {
			a := s.About()
			if a.Name != name {
				t.Errorf("%#v, filed under %q, is of kind %q", s, name, a.Name)
			}
			if a.Target == "" || a.Effect == "" {
				t.Errorf("%T: kind %+v lacks a target or an effect", s, a.Kind)
			}
			if want := -1; a.Target == fault.TargetNode && a.Client != want {
				t.Errorf("%T strikes a node but names client %d", s, a.Client)
			}
			if a.Target != fault.TargetNode && a.Name != "cut-replication" && a.Client != 1 {
				t.Errorf("%T strikes client 1 but says client %d", s, a.Client)
			}
			if a.Struck.Type == "" {
				t.Errorf("%T does not say what it strikes", s)
			}
		}
	}
}

// TestEveryFaultTypeHasASample reads this package's source for every type
// with an Inject method, a Fault, and checks samples has one of it: a
// hand-kept list of types would miss the type it was not told of.
func TestEveryFaultTypeHasASample(t *testing.T) {
	sampled := map[string]bool{}
	for _, list := range samples {
		for _, s := range list {
			if ty := reflect.TypeOf(s); ty.PkgPath() == reflect.TypeFor[fault.Env]().PkgPath() {
				sampled[ty.Name()] = true
			}
		}
	}
	types, err := injectors(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(types) < 10 {
		t.Fatalf("found only %d fault types in the source (%q): the search is broken", len(types), types)
	}
	for _, ty := range types {
		if !sampled[ty] {
			t.Errorf("fault type %s has no sample in samples", ty)
		}
	}
}

// injectors are the names of the types of the Go package in dir that have
// an Inject method.
func injectors(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var types []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Inject" {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok {
				types = append(types, id.Name)
			}
		}
	}
	return types, nil
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

// TestClasses checks the classes the kinds fall in: every kind with a
// family has a class of Classes, and kinds of one family share it (a
// family is one failure, in one column); every class has a kind, so no
// column of the comparison stands for no fault; and every class has a
// heading.
func TestClasses(t *testing.T) {
	classOf := map[string]fault.Class{} // by family
	used := map[fault.Class]bool{}
	for _, k := range fault.Kinds() {
		if k.Class != "" && !slices.Contains(fault.Classes(), k.Class) {
			t.Errorf("kind %q: class %q is not in Classes", k.Name, k.Class)
		}
		used[k.Class] = true
		if k.Family == "" {
			continue
		}
		if k.Class == "" {
			t.Errorf("kind %q (%s) has a family but no class", k.Name, k.Family)
		}
		if c, ok := classOf[k.Family]; ok && c != k.Class {
			t.Errorf("kind %q: class %q, but %s is of class %q", k.Name, k.Class, k.Family, c)
		}
		classOf[k.Family] = k.Class
	}
	for _, c := range fault.Classes() {
		if !used[c] {
			t.Errorf("class %q has no kind", c)
		}
		if c.Title() == "" {
			t.Errorf("class %q has no title", c)
		}
	}
	if got := fault.Class("nope").Title(); got != "" {
		t.Errorf("an unknown class's title is %q, want none", got)
	}
}
