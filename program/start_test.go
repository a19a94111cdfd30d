package program

import (
	"strings"
	"testing"
	"time"
)

// TestStartWindow: EnvStart sets how long a program may take to answer
// its first request, and a value that is not a positive count of
// milliseconds is refused by Check in one line.
func TestStartWindow(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
		err  string
	}{
		{"", firstAnswer, ""},
		{"30000", 30 * time.Second, ""},
		{"0", 0, "want a positive number of milliseconds"},
		{"5s", 0, "want a positive number of milliseconds"},
	} {
		t.Setenv(EnvStart, tc.env)
		got, err := startWindow()
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s=%q: %v, %v; want %v, %q", EnvStart, tc.env, got, err, tc.want, tc.err)
		}
		if err := Check("true"); (err == nil) != (tc.err == "") || (err != nil && strings.Contains(err.Error(), "\n")) {
			t.Errorf("%s=%q: Check says %v", EnvStart, tc.env, err)
		}
	}
}
