package timeline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/history"
)

// drawnAt is where a fault of one kind is drawn: the record it leaves (its
// client and target, or a crash's) and the lanes or row it goes to.
type drawnAt struct {
	kind   string
	client int
	target *history.Target
	crash  bool // recorded as a crash, not a fault
	want   []string
}

// TestEveryKindIsDrawn checks where the timeline draws a fault of each
// kind of fault.Kinds. The timeline reads no kind's name to choose a lane:
// it draws a fault from its record's Client and Target alone (a client's
// own fault on its row, hatched; one on a client's links in the network's
// lane; one on nodes in their lanes, the master's in its own; a crash is a
// record of its own, a mark on the client's row). So each kind has a row
// here with the record its faults leave, as fault.Apply and the harness
// write it, and where that is drawn; the rows must cover fault.Kinds, so
// that a new kind is drawn somewhere on purpose.
func TestEveryKindIsDrawn(t *testing.T) {
	const (
		row    = "client 0's row"
		system = -1
	)
	on := func(ty history.TargetType, nodes ...int) *history.Target {
		return &history.Target{Type: ty, Nodes: nodes}
	}
	cases := []drawnAt{
		{kind: "kill-master", client: system, target: &history.Target{Type: history.TargetNode, Role: "master"}, want: []string{"master"}},
		{kind: "cut-replication", client: system, target: on(history.TargetLink, 1, 2), want: []string{"node 1", "node 2"}},
		{kind: "kill-node", client: system, target: on(history.TargetNode, 2), want: []string{"node 2"}},
		{kind: "clock-jump", client: system, target: on(history.TargetNode, 2), want: []string{"node 2"}},
		{kind: "evict", client: system, target: on(history.TargetNode, 0), want: []string{"node 0"}},
		{kind: "kill-connection", client: 0, target: on(history.TargetConnection, 0), want: []string{row}},
		{kind: "pause-node", client: system, target: on(history.TargetNode, 1), want: []string{"node 1"}},
		{kind: "pause", client: 0, target: on(history.TargetClient), want: []string{row}},
		{kind: "partition", client: 0, target: on(history.TargetLink, 0, 1), want: []string{"network"}},
		{kind: "latency", client: 0, target: on(history.TargetLink, 0), want: []string{"network"}},
		{kind: "black-hole", client: 0, target: on(history.TargetLink, 0), want: []string{"network"}},
		{kind: "command-delay", client: 0, target: on(history.TargetClient), want: []string{row}},
		{kind: "drop-reply", client: 0, target: on(history.TargetLink, 0), want: []string{"network"}},
		{kind: "drop-connection", client: 0, target: on(history.TargetConnection, 0), want: []string{row}},
		{kind: "clock-skew", client: 0, target: on(history.TargetClient), want: []string{row}},
		{kind: "crash", client: 0, crash: true, want: []string{row}},
		{kind: "slow-work", client: 0, target: on(history.TargetClient), want: []string{row}},
		// A leader is named by its role, which no lane has: the system's.
		{kind: "kill-leader", client: system, target: &history.Target{Type: history.TargetNode, Role: "leader"}, want: []string{"system"}},
		{kind: "busy-pool", client: 0, target: on(history.TargetClient), want: []string{row}},
		{kind: "prefer-replica", client: system, target: on(history.TargetNode, 2), want: []string{"node 2"}},
	}
	for _, k := range fault.Kinds() {
		if !slices.ContainsFunc(cases, func(c drawnAt) bool { return c.kind == k.Name }) {
			t.Errorf("kind %s has no row here: where does the timeline draw it?", k.Name)
		}
	}
	for _, tc := range cases {
		op := history.Op{Client: tc.client, Kind: history.KindFault, Call: 10 * time.Millisecond, Return: 20 * time.Millisecond,
			FaultKind: tc.kind, Target: tc.target, Fault: "label " + tc.kind}
		if tc.crash {
			op = history.Op{Client: tc.client, Kind: history.KindCrash, Call: 10 * time.Millisecond, Return: 10 * time.Millisecond}
		}
		s := newScene([]history.Op{op, {Client: 0, Kind: history.KindEnd, Call: 100 * time.Millisecond, End: &history.End{TTL: 50 * time.Millisecond}}}, nil)
		var got []string
		if len(s.hatched[0]) > 0 || len(s.crashes) > 0 {
			got = append(got, row)
		}
		for _, lane := range s.lanes {
			if len(s.faults[lane]) > 0 {
				got = append(got, lane)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("a fault of kind %s is drawn in %q, want %q", tc.kind, got, tc.want)
		}
	}
}

// TestKindNamesRead checks the few kinds the timeline reads by name, to
// word a client's own fault ("is paused", "works slowly"): every string
// its source compares a FaultKind with is a kind of fault.Kinds, so that a
// renamed kind fails here rather than silently losing its words.
func TestKindNamesRead(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	isFaultKind := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "FaultKind"
	}
	var read []string
	lit := func(e ast.Expr) {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if v, err := strconv.Unquote(b.Value); err == nil {
				read = append(read, v)
			}
		}
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if isFaultKind(n.X) {
					lit(n.Y)
				}
				if isFaultKind(n.Y) {
					lit(n.X)
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isFaultKind(n.Tag) {
					for _, c := range n.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							lit(e)
						}
					}
				}
			}
			return true
		})
	}
	if len(read) == 0 {
		t.Fatal("found no kind the timeline reads by name: the search is broken")
	}
	for _, name := range read {
		if !slices.ContainsFunc(fault.Kinds(), func(k fault.Kind) bool { return k.Name == name }) {
			t.Errorf("the timeline reads a fault of kind %q, which fault.Kinds lacks", name)
		}
	}
}
