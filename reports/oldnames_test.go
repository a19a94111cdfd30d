package reports

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locklab/locklab/runner"
)

// TestLoadRunOldNames loads run folders saved before the words spoiled and
// missed, whose run.json and result.json say not_exercised and unmet, and
// ones saved after.
func TestLoadRunOldNames(t *testing.T) {
	tests := []struct {
		name            string
		in              string
		spoiled, missed []string
	}{
		{"old names", `{"lock":"redislock","scenario":"s","not_exercised":["a"],"unmet":["b"]}`, []string{"a"}, []string{"b"}},
		{"new names", `{"lock":"redislock","scenario":"s","spoiled":["a"],"missed":["b"]}`, []string{"a"}, []string{"b"}},
		{"neither", `{"lock":"redislock","scenario":"s"}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range []string{RunFile, runner.ResultFile} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(tt.in), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, _, err := loadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.Lock != "redislock" || !reflect.DeepEqual(r.Spoiled, tt.spoiled) || !reflect.DeepEqual(r.Missed, tt.missed) {
				t.Errorf("run.json: lock %q, spoiled %q, missed %q; want redislock, %q, %q", r.Lock, r.Spoiled, r.Missed, tt.spoiled, tt.missed)
			}
			if res := r.Result; res == nil || res.Scenario != "s" || !reflect.DeepEqual(res.Spoiled, tt.spoiled) || !reflect.DeepEqual(res.Missed, tt.missed) {
				t.Errorf("result.json: %+v; want scenario s, spoiled %q, missed %q", res, tt.spoiled, tt.missed)
			}
		})
	}
}
