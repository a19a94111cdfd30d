package workshop

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/pitfalls"
)

// TestLockExcerpt: every broken lock of the catalogue is quoted from its
// own source, and del-release's quote shows its plain DEL.
func TestLockExcerpt(t *testing.T) {
	for _, p := range pitfalls.Catalogue() {
		ex, err := lockExcerpt(p.Broken)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if n := strings.Count(ex.Code, "\n") + 1; n > maxExcerpt+1 || !strings.Contains(ex.Code, "func ") {
			t.Errorf("%s: %d lines from %s:\n%s", p.Name, n, ex.File, ex.Code)
		}
		if p.Name == "del-release" && (ex.File != "broken/del_release.go" || !strings.Contains(ex.Code, ".Del(ctx, l.key)")) {
			t.Errorf("del-release quoted %s:\n%s", ex.File, ex.Code)
		}
	}
}
