package reports

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locklab/locklab/runner"
)

// TestLoadRunOldNames loads run folders saved before the word spoiled,
// whose run.json and result.json say not_exercised, and ones saved after.
func TestLoadRunOldNames(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		spoiled []string
	}{
		{"not_exercised", `{"lock":"redislock","scenario":"s","not_exercised":["failpoint x never fired"]}`, []string{"failpoint x never fired"}},
		{"spoiled", `{"lock":"redislock","scenario":"s","spoiled":["failpoint x never fired"]}`, []string{"failpoint x never fired"}},
		{"neither", `{"lock":"redislock","scenario":"s"}`, nil},
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
			if r.Lock != "redislock" || !reflect.DeepEqual(r.Spoiled, tt.spoiled) {
				t.Errorf("run.json: lock %q, spoiled %q; want redislock, %q", r.Lock, r.Spoiled, tt.spoiled)
			}
			if res := r.Result; res == nil || res.Scenario != "s" || !reflect.DeepEqual(res.Spoiled, tt.spoiled) {
				t.Errorf("result.json: %+v; want scenario s, spoiled %q", res, tt.spoiled)
			}
		})
	}
}
