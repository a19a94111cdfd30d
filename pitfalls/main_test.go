package pitfalls_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain leaves the catalogue's runs out under -short (make test-short):
// scenarios' TestOneRunPerService makes the short tier's one run per
// service. A -skip given on the command line wins.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.skip").Value.String() == "" {
		flag.Set("test.skip", "^TestCatalogue$")
	}
	os.Exit(m.Run())
}
