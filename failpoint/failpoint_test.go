package failpoint

import (
	"fmt"
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

// TestActionsAreKinds checks what kind of fault each action is, at a
// command's failpoint and elsewhere, and what it strikes.
func TestActionsAreKinds(t *testing.T) {
	command := BeforeCommand(PhaseRelease, 1)
	for _, tc := range []struct {
		action Action
		at     string
		kind   string
		struck history.TargetType
	}{
		{Pause(time.Second), CriticalSection, "pause", history.TargetClient},
		{Pause(time.Second), command, "pause", history.TargetClient},
		{Crash(), AfterTook, "crash", history.TargetClient},
		{DropReply(), AfterCommand(PhaseAcquire, 1), "drop-reply", history.TargetLink},
		{HoldConn(CriticalSection, time.Second), Acquired, "busy-pool", history.TargetClient},
		{Sleep(time.Second), CriticalSection, "slow-work", history.TargetClient},
		{Sleep(time.Second), command, "command-delay", history.TargetClient},
		{Inject(fault.Partition{Client: 2}, time.Second), Acquired, "partition", history.TargetLink},
	} {
		a := Point{Name: tc.at, Client: 2, Action: tc.action}.About()
		if a.Name != tc.kind || a.Struck.Type != tc.struck || a.Client != 2 {
			t.Errorf("%s at %s: kind %q striking %q of client %d, want %q striking %q of client 2", tc.action, tc.at, a.Name, a.Struck.Type, a.Client, tc.kind, tc.struck)
		}
		if tc.action.Kind != ActionFault && ActionKindName(tc.action.Kind, tc.at) != tc.kind {
			t.Errorf("ActionKindName(%s, %s) = %q, want %q", tc.action.Kind, tc.at, ActionKindName(tc.action.Kind, tc.at), tc.kind)
		}
	}
}

// TestEveryActionHasAKind reads this package's source for every ActionKind
// constant and checks that actions has a row for each (but ActionFault,
// whose kind is its fault's) and that every kind a row names is in
// fault.Kinds: a new action without a kind of fault fails here.
func TestEveryActionHasAKind(t *testing.T) {
	declared, err := actionConstants(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(declared) < 5 {
		t.Fatalf("found only %d ActionKind constants in the source (%q): the search is broken", len(declared), declared)
	}
	for name, value := range declared {
		if value == ActionFault {
			continue
		}
		if _, ok := actionOf(value); !ok {
			t.Errorf("action kind %s (%q) has no row in actions", name, value)
		}
	}
	known := func(name string) bool {
		return slices.ContainsFunc(fault.Kinds(), func(k fault.Kind) bool { return k.Name == name })
	}
	for _, a := range actions() {
		for _, k := range []string{a.fault, a.atCommand} {
			if k != "" && !known(k) {
				t.Errorf("action %s is of kind %q, which fault.Kinds lacks", a.action, k)
			}
		}
	}
}

// actionConstants are the constants of type ActionKind the Go package in
// dir declares, by name.
func actionConstants(dir string) (map[string]ActionKind, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	consts := map[string]ActionKind{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "ActionKind" {
					continue
				}
				for i, n := range v.Names {
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok {
						return nil, fmt.Errorf("%s: %s is not a string literal", file, n.Name)
					}
					value, err := strconv.Unquote(lit.Value)
					if err != nil {
						return nil, fmt.Errorf("%s: %s: %w", file, n.Name, err)
					}
					consts[n.Name] = ActionKind(value)
				}
			}
		}
	}
	return consts, nil
}
