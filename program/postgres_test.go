package program

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/program/relay"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/sqldb"
)

// TestPostgresEnvironment: on the postgres topology a lock program gets
// LOCKLAB_POSTGRES, a URL of the server through its client's own link (so
// the link's faults reach it; its relay, when it has one, forwards there:
// TestMySQLRelay checks the relay's URL on mariadb), and no Redis address.
func TestPostgresEnvironment(t *testing.T) {
	cl, c, links := joinTopology(t, cluster.PostgresTopology, 2, time.Second)
	env := map[string]string{}
	for _, kv := range environment(c, nil, nil) {
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

// TestPostgresRelay puts a relay between pgx, whose default is the
// extended protocol (each statement prepared by name, then bound and
// executed), and a real PostgreSQL: statements with arguments read their
// results as from the server, twice over one prepared statement, and after
// a server error; an Execute struck by a crash before it never reaches the
// server, one whose reply is dropped runs and its connection ends.
func TestPostgresRelay(t *testing.T) {
	ctx := context.Background()
	cl, _, _ := joinTopology(t, cluster.PostgresTopology, 9, time.Second)
	admin, err := pgx.Connect(ctx, sqldb.Server(cl).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// relayedPG is a pgx connection through a relay of client id, struck
	// by points.
	relayedPG := func(id int, points *failpoint.Set, h *history.Recorder) (*harness.Client, *pgx.Conn) {
		c, _, err := harness.Join(ctx, cl, harness.ClientOptions{ID: id, TTL: 300 * time.Millisecond, Timeout: 500 * time.Millisecond, Service: service.For(cluster.PostgresTopology)}, h, points)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		upstream, proto, err := relayed(c.Endpoints())
		if err != nil || proto != relay.Postgres {
			t.Fatalf("relayed: %v %v", proto, err)
		}
		r, err := relay.Listen(c, upstream, proto)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		conn, err := pgx.Connect(ctx, envOf(environment(c, r, nil))[EnvPostgres])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		return c, conn
	}
	bounded, cancel := context.WithTimeout(ctx, 30*time.Second) // should the relay misread a reply
	defer cancel()

	h, _ := history.New("")
	_, conn := relayedPG(10, failpoint.NewSet(nil), h)
	for _, v := range []int{41, 6} {
		var n int
		if err := conn.QueryRow(bounded, "SELECT $1::int + 1", v).Scan(&n); err != nil || n != v+1 {
			t.Errorf("extended SELECT %d + 1: %d %v", v, n, err)
		}
	}
	if _, err := conn.Exec(bounded, "SELECT 1 / $1::int", 0); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Errorf("a server error: %v", err)
	}
	var s string
	if err := conn.QueryRow(bounded, "SELECT $1::text || 'b'", pgx.QueryExecModeSimpleProtocol, "a").Scan(&s); err != nil || s != "ab" {
		t.Errorf("a simple query after the error: %q %v", s, err)
	}
	// COPY FROM STDIN: the relay hands on CopyInResponse, and pipes.
	if _, err := admin.Exec(ctx, "CREATE TABLE relay_copy (x int); CREATE TABLE relay_struck (name text)"); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.CopyFrom(bounded, pgx.Identifier{"relay_copy"}, []string{"x"}, pgx.CopyFromRows([][]any{{1}, {2}})); err != nil || n != 2 {
		t.Errorf("copy: %d rows, %v", n, err)
	}
	if err := conn.QueryRow(bounded, "SELECT sum(x) FROM relay_copy").Scan(&s); err != nil || s != "3" {
		t.Errorf("after the copy: %q %v", s, err)
	}

	tests := []struct {
		name  string
		point failpoint.Point
		ran   bool // whether the statement reached the server
	}{
		{"crash before", failpoint.Point{Name: failpoint.BeforeCommand(failpoint.PhaseAcquire, 1), Client: 11, Action: failpoint.Crash()}, false},
		{"dropped reply", failpoint.Point{Name: failpoint.AfterCommand(failpoint.PhaseAcquire, 1), Client: 12, Action: failpoint.DropReply()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			points := failpoint.NewSet([]failpoint.Point{tt.point})
			h, _ := history.New("")
			c, conn := relayedPG(tt.point.Client, points, h)
			actx, leave := c.Enter(bounded, failpoint.PhaseAcquire)
			_, err := conn.Exec(actx, "INSERT INTO relay_struck VALUES ($1)", tt.name)
			leave()
			if err == nil {
				t.Errorf("the struck statement answered ok")
			}
			var n int
			if err := admin.QueryRow(ctx, "SELECT count(*) FROM relay_struck WHERE name = $1", tt.name).Scan(&n); err != nil || (n == 1) != tt.ran {
				t.Errorf("%d rows %q (%v), want the statement run: %v", n, tt.name, err, tt.ran)
			}
			if lines := points.Unfired(); len(lines) > 0 {
				t.Errorf("failpoints did not fire: %v", lines)
			}
			struck := false
			for _, op := range h.Ops() {
				struck = struck || (op.Failpoint == tt.point.Name && op.Command == "INSERT")
			}
			if !struck {
				t.Errorf("no fault at the INSERT in the history: %+v", h.Ops())
			}
		})
	}
}
