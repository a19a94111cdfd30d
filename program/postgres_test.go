package program

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/service/sqldb"
)

// TestPostgresEnvironment: on the postgres topology a lock program gets
// LOCKLAB_POSTGRES, a URL of the server through its client's own link (so
// the link's faults reach it; its relay, when it has one, forwards there:
// TestMySQLRelay checks the relay's URL on mariadb), and no Redis address.
func TestPostgresEnvironment(t *testing.T) {
	cl, c, links := joinTopology(t, cluster.PostgresTopology, 2, time.Second)
	env := map[string]string{}
	for _, kv := range environment(c, nil) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range []string{EnvRedis, EnvNodes, EnvSentinels} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%s on postgres", k, v)
		}
	}
	server, err := url.Parse(sqldb.Server(cl).DSN())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(env[EnvPostgres])
	if err != nil || u.Scheme != "postgres" || u.Host != links[0].Addr() || links[0].Upstream() != server.Host {
		t.Errorf("%s=%q (%v); want a postgres:// URL through the client's link %s to %s", EnvPostgres, env[EnvPostgres], err, links[0].Addr(), links[0].Upstream())
	}
	if env[EnvClient] != "2" || env[EnvTTL] != "300" || env[EnvTimeout] != "1000" {
		t.Errorf("environment %v", env)
	}
}
