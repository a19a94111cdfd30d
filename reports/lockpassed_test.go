package reports

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
)

// TestLockPassed: check -lock fails a lock for a failing verdict that is
// not inherent, or when no run judged it; runs that said nothing of it
// are counted apart.
func TestLockPassed(t *testing.T) {
	ok := Run{Lock: "l", Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.OK}}
	inherent := Run{Lock: "l", Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.Illegal}, Kinds: map[string]checker.Kind{checker.CheckLock: checker.Inherent}}
	own := Run{Lock: "l", Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.Illegal}, Kinds: map[string]checker.Kind{checker.CheckLock: checker.Own}}
	untold := Run{Lock: "l", Verdicts: map[string]checker.Verdict{checker.CheckLock: checker.Illegal}}
	spoiled := Run{Lock: "l", Spoiled: []string{"no relay reads the program's pool"}}
	unknown := Run{Lock: "l", Verdicts: map[string]checker.Verdict{checker.CheckHandover: checker.Unknown}}
	skipped := Run{Lock: "l", Skipped: "no redis-server"}
	for _, tc := range []struct {
		name   string
		runs   []Run
		passed bool
		note   string
	}{
		{"all ok", []Run{ok, inherent}, true, ""},
		{"own", []Run{ok, own, spoiled}, false, ""},
		{"untold", []Run{ok, untold}, false, ""},
		{"some said nothing", []Run{ok, inherent, spoiled, unknown, skipped}, true, "no failure of the lock's own in 2 judged runs; 3 more said nothing"},
		{"none judged", []Run{spoiled, skipped}, false, "no run judged the lock"},
	} {
		passed, note := LockPassed(tc.runs)
		if passed != tc.passed || !strings.HasPrefix(note, tc.note) || (tc.note == "") != (note == "") {
			t.Errorf("%s: %v, %q; want %v, %q", tc.name, passed, note, tc.passed, tc.note)
		}
	}
}
