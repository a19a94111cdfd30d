package locks

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/pitfalls"
)

// TestAll: every lock has a unique name, an about line, a constructor and a
// known topology; a broken lock names a pitfall the catalogue has.
func TestAll(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range append(All(), Tests()...) {
		if l.Name == "" || seen[l.Name] {
			t.Errorf("lock %q: empty or repeated name", l.Name)
		}
		seen[l.Name] = true
		if l.About == "" || l.New == nil || len(l.Topologies) == 0 {
			t.Errorf("lock %s lacks an about line, a constructor or a topology", l.Name)
		}
		for _, top := range l.Topologies {
			if !cluster.Known(top) || top == "" {
				t.Errorf("lock %s: unknown topology %q", l.Name, top)
			}
		}
	}
	for _, p := range pitfalls.Catalogue() {
		for _, c := range p.Cases() {
			if !seen[c.Lock] {
				t.Errorf("pitfall %s: %s names no lock of the registry: %q", p.Name, c.Variant, c.Lock)
			}
		}
	}
	for _, name := range []string{"redsync", "redsync-refresh", "redislock", "redislock-refresh", "del-release",
		"token", "token-watchdog", "reentrant", "wait-replicas", "redlock", "fenced", "redlock-no-elapsed"} {
		if !seen[name] {
			t.Errorf("no lock named %s", name)
		}
	}
}

func TestGroup(t *testing.T) {
	for name, want := range map[string]string{"del-release": GroupBroken, "no-renewal": GroupBroken, "etcd-mutex": GroupCorrect, "token": GroupCorrect, "redsync": GroupLibrary} {
		l, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Group(); got != want {
			t.Errorf("%s is in group %s, want %s", name, got, want)
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup found a lock named nope")
	}
}

// TestReference: the reference of each topology is a correct lock that runs
// on it, the reentrant one where critical sections nest.
func TestReference(t *testing.T) {
	tests := []struct {
		topology cluster.Topology
		nested   bool
		want     string
	}{
		{cluster.Single, false, "token-watchdog"},
		{cluster.Replicated, false, "token-watchdog"},
		{cluster.Redlock, false, "redlock"},
		{cluster.Single, true, "reentrant"},
		{cluster.Replicated, true, "reentrant"},
		{cluster.Redlock, true, "redlock"},
	}
	for _, tt := range tests {
		l := Reference(tt.topology, tt.nested)
		if l.Name != tt.want || !l.Supports(tt.topology) || l.Group() != GroupCorrect {
			t.Errorf("Reference(%s, %v) = %s, want %s, a correct lock that runs there", tt.topology, tt.nested, l.Name, tt.want)
		}
	}
}

// TestReferencesRun: a lock's own reference is a lock of the registry
// that runs on every topology of the lock.
func TestReferencesRun(t *testing.T) {
	for _, l := range All() {
		if l.Reference == "" {
			continue
		}
		for _, topo := range l.Topologies {
			if got := l.ReferenceOn(topo); got.Name != l.Reference {
				t.Errorf("%s on %s is measured against %s, want %s", l.Name, topo, got.Name, l.Reference)
			}
		}
	}
}

// TestProgramNames: each program command line names a folder of its own,
// also when two differ only past the cut of a long name.
func TestProgramNames(t *testing.T) {
	long := "python3 /home/someone/src/github.com/some-org/python-redis-lock/examples/lock.py"
	commands := []string{"python3 lock.py --heart", "python3 lock.py --gw", long + " --heart", long + " --gw"}
	seen := map[string]string{}
	for _, c := range commands {
		name := programName(c)
		if other, ok := seen[name]; ok {
			t.Errorf("%q and %q share the name %s", other, c, name)
		}
		seen[name] = c
		if len(name) > 70 || strings.ContainsAny(name, " /'\"") {
			t.Errorf("%q names %q: too long, or not a folder's name", c, name)
		}
	}
}
