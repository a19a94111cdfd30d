package broken_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/locklab/locklab/broken"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/pitfalls"
)

// TestInProcess: the mutex excludes within its own process and nowhere
// else, which is the whole pitfall; no Redis is needed to show it. Each
// step acquires (or releases the lease it names) in process 0 or 1.
func TestInProcess(t *testing.T) {
	type step struct {
		process int
		release int // 0: acquire; n: release the lease of step n-1
		want    error
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"two processes both hold it", []step{{process: 0}, {process: 1}}},
		{"one process holds it once", []step{{process: 0}, {process: 0, want: harness.ErrNotAcquired}}},
		{"released, it is taken again", []step{{process: 0}, {process: 0, release: 1}, {process: 0}}},
		// A second Unlock of a sync.Mutex would end the whole run.
		{"a second release is refused", []step{{process: 0}, {process: 0, release: 1}, {process: 0, release: 1, want: harness.ErrNotHeld}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			// The Locker is built once per client, as the runner builds it;
			// this lock never touches its client.
			processes := []harness.Locker{broken.NewInProcess(nil), broken.NewInProcess(nil)}
			leases := make([]harness.Lease, len(tt.steps))
			for i, s := range tt.steps {
				var err error
				if s.release > 0 {
					err = leases[s.release-1].Release(ctx)
				} else {
					leases[i], err = processes[s.process].Acquire(ctx, "lock")
				}
				if !errors.Is(err, s.want) {
					t.Fatalf("step %d: error %v, want %v", i, err, s.want)
				}
				if s.release == 0 && err == nil && leases[i].Token() != 0 {
					t.Errorf("step %d: token %d, want 0: the lock has none", i, leases[i].Token())
				}
			}
		})
	}
}

// TestCasesAreDistinct: no two cases of a pitfall share a variant and a
// scenario, which name a case's run folder and its line in the report.
func TestCasesAreDistinct(t *testing.T) {
	for _, p := range pitfalls.Catalogue() {
		seen := map[string]bool{}
		for _, c := range p.Cases() {
			key := string(c.Variant) + " in " + c.Scenario
			if seen[key] {
				t.Errorf("%s: two cases %s", p.Name, key)
			}
			seen[key] = true
		}
	}
}

// TestFamilies: every pitfall names its family, and the catalogue lists
// each family's pitfalls together, so the report heads each family once.
func TestFamilies(t *testing.T) {
	var order []pitfalls.Family
	for _, p := range pitfalls.Catalogue() {
		switch p.Family {
		case pitfalls.InProcess, pitfalls.Redis, pitfalls.Database, pitfalls.Consensus, pitfalls.Cache:
		default:
			t.Errorf("%s: family %q", p.Name, p.Family)
		}
		if len(order) == 0 || order[len(order)-1] != p.Family {
			if slices.Contains(order, p.Family) {
				t.Errorf("%s: the %s family's pitfalls are not listed together", p.Name, p.Family)
			}
			order = append(order, p.Family)
		}
	}
}
