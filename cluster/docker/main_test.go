package docker

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs none of this package's tests under -short (make
// test-short): each starts containers, and the short tier keeps one run
// per service on the local backend (scenarios' TestOneRunPerService). A
// -run given on the command line wins.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		flag.Set("test.run", "^$")
	}
	os.Exit(m.Run())
}
