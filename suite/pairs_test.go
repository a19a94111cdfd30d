package suite

import (
	"context"
	"os"
	"testing"
)

// TestPairsRefuses: an unknown lock or scenario, a lock off the scenario's
// topology, or nothing to run is refused before any run, and nothing is
// written.
func TestPairsRefuses(t *testing.T) {
	for _, pairs := range [][]Pair{
		{{Lock: "no-such-lock", Scenario: "pause-holder"}},
		{{Lock: "token", Scenario: "no-such-scenario"}},
		{{Lock: "etcd-mutex", Scenario: "pause-holder"}},
		nil,
	} {
		out := t.TempDir()
		if _, err := Pairs(context.Background(), pairs, Options{Out: out}); err == nil {
			t.Errorf("Pairs(%v) = nil error, want a refusal", pairs)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("Pairs(%v) wrote %d entries", pairs, len(entries))
		}
	}
}
