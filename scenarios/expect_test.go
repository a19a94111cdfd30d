package scenarios_test

import (
	"strings"
	"sync"
	"testing"
)

// runs lets a run that missed be made again alone: every run of
// expect holds it shared, and a run made again holds it whole, once the
// runs under way have ended. (Explorations do not take it.)
var runs sync.RWMutex

// aloneTries is how many times a run that missed in parallel is made alone.
const aloneTries = 3

// expect makes a run with attempt, which returns what the run missed,
// beside the package's other runs. A machine loaded by the runs beside it
// can stall a client past its lease or leave a liveness wait unknown, so a
// run that missed is made again alone, as check's suite makes it, up to
// aloneTries times; only a run that misses alone every time fails t. What
// the run in parallel missed stays in the log.
func expect(t *testing.T, attempt func() (missed []string)) {
	t.Helper()
	missed := func() []string {
		runs.RLock()
		defer runs.RUnlock()
		return attempt()
	}()
	if len(missed) == 0 {
		return
	}
	t.Logf("in parallel it missed: %s; made again alone", strings.Join(missed, "; "))
	runs.Lock()
	defer runs.Unlock()
	for try := 1; try <= aloneTries; try++ {
		if missed = attempt(); len(missed) == 0 {
			return
		}
		t.Logf("alone, try %d missed: %s", try, strings.Join(missed, "; "))
	}
	t.Errorf("missed alone %d times: %s", aloneTries, strings.Join(missed, "; "))
}
