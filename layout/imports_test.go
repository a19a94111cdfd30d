package layout_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is locklab's import path, cut from package paths below.
const module = "github.com/locklab/locklab/"

// backends may import every client library: they start and set up the
// servers, and read them past any link (backendkit is what they share).
var backends = []string{"cluster/local", "cluster/docker", "cluster/internal/backendkit"}

// libraries are the lock services' client libraries, each with the
// packages that may import it: its service's package and those below it
// (and the locks written for it), and, until the service is behind the seam, the
// packages that still do (notYet), which this test keeps exact so that the
// list can only shrink.
var libraries = []struct {
	path    string // import path prefix
	allowed []string
	notYet  []string
}{
	{path: "github.com/bradfitz/gomemcache", allowed: []string{"service/memcached"}},
	{path: "go.etcd.io/etcd/client", allowed: []string{"service/etcd"}},
	{path: "github.com/go-zookeeper/zk", allowed: []string{"service/zookeeper"}},
	{path: "github.com/go-sql-driver/mysql", allowed: []string{"service/sqldb"}},
	{path: "github.com/jackc/pgx", allowed: []string{"service/sqldb"}},
	// The Redis locks (the broken ones, the correct ones, the libraries'
	// and every lock by name) are written for go-redis, as the locks of
	// service/etcd are for etcd's client.
	{path: "github.com/redis/go-redis", allowed: []string{"service/redis", "broken", "reference", "libraries", "locks"}},
}

// TestClientLibraries checks who imports each lock service's client
// library (only the service's own package, the locks written
// for it and the backends): a package that starts to fails here, and so
// does an entry of notYet that no longer does, until it is taken out.
func TestClientLibraries(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	importers := map[string][]string{} // library → locklab packages
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			for _, lib := range libraries {
				if strings.HasPrefix(imp, lib.path) && !slices.Contains(importers[lib.path], pkg) {
					importers[lib.path] = append(importers[lib.path], pkg)
				}
			}
		}
	}
	for _, lib := range libraries {
		got := importers[lib.path]
		for _, pkg := range got {
			if !under(pkg, backends) && !under(pkg, lib.allowed) && !slices.Contains(lib.notYet, pkg) {
				t.Errorf("%s imports %s: only its service's package, the locks written for it and the backends may", pkg, lib.path)
			}
		}
		for _, pkg := range lib.notYet {
			if !slices.Contains(got, pkg) {
				t.Errorf("%s no longer imports %s: take it out of notYet", pkg, lib.path)
			}
		}
	}
}

// under reports whether pkg is one of dirs or below one.
func under(pkg string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return pkg == d || strings.HasPrefix(pkg, d+"/") })
}
