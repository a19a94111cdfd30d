package program

import (
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
)

// TestEtcdEnvironment: on the etcd topology a lock program gets
// LOCKLAB_ETCD, each member through its client's own link, and the lease
// to ask for in LOCKLAB_SESSION_MS (whole seconds); no Redis address, and
// no relay, whose absence Unrelayed explains.
func TestEtcdEnvironment(t *testing.T) {
	cl, c, links := joinTopology(t, cluster.EtcdTopology, 1, time.Second)
	env := map[string]string{}
	for _, kv := range environment(c, nil) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range []string{EnvRedis, EnvNodes, EnvSentinels, EnvMySQL, EnvPostgres} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%s on etcd", k, v)
		}
	}
	var want []string
	for i, l := range links {
		want = append(want, l.Addr())
		if l.Upstream() != cl.LockNodes()[i].Addr() {
			t.Errorf("link %d goes to %s, not member %s", i, l.Upstream(), cl.LockNodes()[i].Addr())
		}
	}
	if got := env[EnvEtcd]; got != strings.Join(want, ",") || len(want) != cluster.EtcdMembers {
		t.Errorf("%s=%q, want the client's links %q", EnvEtcd, got, want)
	}
	if env[EnvSession] != "1000" || env[EnvTTL] != "300" || env[EnvClient] != "1" {
		t.Errorf("environment %v", env)
	}
	if why := c.Endpoints().Unrelayed(); !strings.Contains(why, "gRPC") {
		t.Errorf("Unrelayed: %q, want why no relay reads etcd's requests", why)
	}
}
