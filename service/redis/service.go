package redis

import (
	"embed"
	"errors"
	"io/fs"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/harness"
)

// Bind is the Dialer of d's clients: d itself, since Redis's deployment
// knows what the clients' link addresses alone do not name (its nodes'
// own addresses, the Sentinels of replicated) (harness.Bound).
func (s Service) Bind(d cluster.Deployment) harness.Dialer {
	if own, ok := d.(harness.Dialer); ok {
		return own
	}
	return s
}

// Dial refuses: a Redis client is dialled by the deployment its Dialer is
// bound to (Bind), which the harness always does.
func (Service) Dial(c *harness.Client, addrs []string) (harness.Handle, error) {
	return nil, errors.New("redis: a client is dialled by its cluster's deployment (Service.Bind)")
}

// Env is nothing unbound: the bound deployment's Env says it (Bind).
func (Service) Env(c *harness.Client, addrs []string) []string { return nil }

// Reference is none: Redis's correct lock depends on the topology and on
// whether the scenario nests acquires, so package reference chooses it
// (reference.For) before it asks a service behind the seam.
func (Service) Reference() (string, harness.NewLocker) { return "", nil }

// Source holds this package's Go files, so that a workshop page can quote
// a lock's own code, as built, rather than a copy that drifts from it.
//
//go:embed *.go
var Source embed.FS

// Source is the package's Go files (service.Service).
func (Service) Source() fs.FS { return Source }
