package scenarios_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain keeps, under -short, only TestOneRunPerService of this
// package's runs: the short tier's one run per service (make test-short).
// A -run given on the command line wins.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		flag.Set("test.run", "^TestOneRunPerService$")
	}
	os.Exit(m.Run())
}
