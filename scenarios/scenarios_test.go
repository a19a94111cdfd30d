package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reference"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/scenarios"
)

// TestScenariosAreValidAndUnique: every scenario, check compare's own
// included, is valid, named once, and says what it does.
func TestScenariosAreValidAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range append(scenarios.All(), scenarios.Compared()...) {
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if seen[s.Name] {
			t.Errorf("two scenarios named %q", s.Name)
		}
		seen[s.Name] = true
		if s.Description == "" {
			t.Errorf("scenario %q says nothing of what it does", s.Name)
		}
	}
}

func TestRunUnknownScenario(t *testing.T) {
	_, err := scenarios.Run(context.Background(), "nope", reference.NewTokenLock, runner.Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown scenario "nope"`) {
		t.Errorf("error %v", err)
	}
}

func TestCatalogueNamesExistingScenarios(t *testing.T) {
	for _, p := range pitfalls.Catalogue() {
		for _, c := range p.Cases() {
			if _, err := scenarios.Lookup(c.Scenario); err != nil {
				t.Errorf("pitfall %s: %v", p.Name, err)
			}
			if c.Lock == "" || len(c.Expected) == 0 {
				t.Errorf("pitfall %s: %s case in %s has no lock or no expectation", p.Name, c.Variant, c.Scenario)
			}
		}
		if len(p.Catches) == 0 || p.Broken == "" || p.Wrong == "" || p.Article == "" || p.Fix == "" {
			t.Errorf("pitfall %s: incomplete entry", p.Name)
		}
	}
}

// TestFailoverRefusesAShortDuration: one second is too short for the
// failover story; the run is refused before anything starts.
func TestFailoverRefusesAShortDuration(t *testing.T) {
	for _, name := range []string{"failover", "failover-wait"} {
		_, err := scenarios.Run(context.Background(), name, reference.NewTokenLock, runner.Options{Duration: time.Second})
		if err == nil || !strings.Contains(err.Error(), "needs at least 5s") {
			t.Errorf("%s with -duration 1s: error %v, want a refusal naming the 5s minimum", name, err)
		}
	}
}
