package program

import (
	"context"
	"database/sql"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/program/relay"
	"github.com/locklab/locklab/service/sqldb"
)

// TestMySQLRelay puts a relay between real clients and a real MariaDB, as a
// program on the mariadb topology gets it: LOCKLAB_MYSQL names the relay;
// the handshake passes untouched; mysqlnd (PHP), libmariadb (the mariadb
// command, with cached metadata) and go-sql-driver (multi-statements, and
// prepared statements with EOF deprecated) read their replies as from the
// server; after a crash no statement reaches the server.
func TestMySQLRelay(t *testing.T) {
	ctx := context.Background()
	cl, c, _ := joinTopology(t, cluster.MariaDBTopology, 1, 2*time.Second)
	upstream, proto, err := relayed(c.Endpoints())
	if err != nil || proto != relay.MySQL {
		t.Fatalf("relayed: %v %v", proto, err)
	}
	r, err := relay.Listen(c, upstream, proto)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var dsn string
	for _, kv := range environment(c, r, nil) {
		if v, ok := strings.CutPrefix(kv, EnvMySQL+"="); ok {
			dsn = v
		}
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host != r.Addrs()[0] || u.Scheme != "mysql" {
		t.Fatalf("%s=%q, want a mysql:// URL of the relay %s", EnvMySQL, dsn, r.Addrs()[0])
	}

	// Bounds, should the relay misread a reply and leave a client waiting.
	bounded, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := exec.LookPath("mariadb"); err == nil {
		out, err := exec.CommandContext(bounded, "mariadb", "--protocol=TCP", "-h", u.Hostname(), "-P", u.Port(), "-u", u.User.Username(), "-N", "-B",
			"-e", "SELECT 1; DO 2; SELECT 'x', 3; SELECT * FROM locklab.nope").CombinedOutput()
		if got := string(out); !strings.HasPrefix(got, "1\nx\t3\n") || !strings.Contains(got, "doesn't exist") {
			t.Errorf("mariadb: %q %v", got, err)
		}
	}
	if out, err := exec.Command("php", "-m").Output(); err == nil && strings.Contains(string(out), "pdo_mysql") {
		script := `$u = parse_url(getenv("URL"));
$db = new PDO(sprintf("mysql:host=%s;port=%d;dbname=locklab", $u["host"], $u["port"]), $u["user"], "", [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$st = $db->prepare("SELECT GET_LOCK(?, 0), RELEASE_LOCK(?)");
$st->execute(["k", "k"]);
echo implode(",", $st->fetch(PDO::FETCH_NUM)), "\n";
$st = null;
$m = $db->query("SELECT 1; SELECT 2");
do { echo $m->fetchColumn(), "\n"; } while ($m->nextRowset());
$m = null;
$db->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
$st = $db->prepare("SELECT CONCAT(?, 'b'), ?");
foreach (["a", "c"] as $v) { $st->execute([$v, 5]); echo implode(",", $st->fetch(PDO::FETCH_NUM)), "\n"; }`
		cmd := exec.CommandContext(bounded, "php", "-r", script)
		cmd.Env = append(cmd.Environ(), "URL="+dsn)
		if out, err := cmd.CombinedOutput(); string(out) != "1,1\n1\n2\nab,5\ncb,5\n" {
			t.Errorf("php: %q %v", out, err)
		}
	}

	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName, cfg.MultiStatements = u.User.Username(), "tcp", u.Host, "locklab", true
	cfg.ReadTimeout = 10 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRowContext(ctx, "DO 1; SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("multi-statement: %d %v", n, err)
	}
	// With arguments, go-sql-driver prepares, executes and closes.
	for _, v := range []string{"a", "c"} {
		var s string
		if err := db.QueryRowContext(ctx, "SELECT CONCAT(?, 'b')", v).Scan(&s); err != nil || s != v+"b" {
			t.Errorf("prepared: %q %v", s, err)
		}
	}
	if _, err := db.ExecContext(ctx, "DO ?", 1); err != nil {
		t.Errorf("prepared, no rows: %v", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT 8").Scan(&n); err != nil || n != 8 {
		t.Errorf("after a prepared statement: %d %v", n, err)
	}

	conn, err := sql.Open("mysql", strings.Replace(cfg.FormatDSN(), "multiStatements=true", "multiStatements=false", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	c.Crash("test")
	if _, err := conn.ExecContext(ctx, "CREATE TABLE locklab.after_crash (x INT)"); err == nil {
		t.Error("a statement after the crash had a reply")
	}
	admin, err := sql.Open("mysql", sqldb.Server(cl).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var tables int
	if err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'after_crash'").Scan(&tables); err != nil || tables != 0 {
		t.Errorf("after the crash: %d tables after_crash (%v), want the statement never sent", tables, err)
	}
}
