package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
)

// ErrNoMariaDB means no usable MariaDB installation was found.
// MariaDBPath wraps it, so callers can tell a missing dependency from a failed run.
var ErrNoMariaDB = errors.New("MariaDB not found")

const (
	mariaDBDirName      = "mariadb"
	mariaDBLogName      = "mariadbd.log"
	mariaDBSocketName   = "mysqld.sock"
	mariaDBReadyPoll    = 10 * time.Millisecond
	mariaDBLogTailLines = 20
)

// MariaDB is one mariadbd process on 127.0.0.1 with its own data directory.
// Its user root has no password, like the Redis nodes, which need none either:
// it listens on loopback only and lives for one run.
// Its methods may be called from several goroutines.
type MariaDB struct {
	// dir is Dir/mariadb, which holds the log and two directories of the server's
	// own: data (with the socket) and tmp. A shared tmp would not do: at start-up
	// mariadbd deletes every temporary table file it finds there, other servers' too.
	dir  string
	port int
	addr string
	cfg  *mysql.Config
	db   *sql.DB

	mu      sync.Mutex // serializes Stop, Kill and Restart
	proc    *proc.Process
	stopped bool
	server  string // mariadbd's path, for Restart
	// clock is the server's wall clock, which JumpClock moves: NOW(),
	// and with it the expiry of a lock row kept in the server's time.
	clock *proc.Clock
}

// MariaDBPath returns the programs StartMariaDB runs: mariadb-install-db (or
// mysql_install_db) and mariadbd (or mysqld), from $MARIADB_BIN_DIR when set, else
// from PATH; mariadbd also from the sbin next to mariadb-install-db's directory.
// The error says how to install them.
func MariaDBPath() (installDB, server string, err error) {
	dir := os.Getenv("MARIADB_BIN_DIR")
	where := "on PATH"
	if dir != "" {
		where = "in MARIADB_BIN_DIR=" + dir
	}
	installDB, ok := proc.FindProgram(dir, "mariadb-install-db", "mysql_install_db")
	if !ok {
		return "", "", errNoMariaDB("mariadb-install-db", where)
	}
	server, ok = proc.FindProgram(dir, "mariadbd", "mysqld")
	if !ok {
		// Debian and Fedora put the server in sbin next to bin, and sbin is not
		// on an ordinary user's PATH.
		sbin := filepath.Join(filepath.Dir(filepath.Dir(installDB)), "sbin")
		if server, ok = proc.FindProgram(sbin, "mariadbd", "mysqld"); !ok {
			return "", "", errNoMariaDB("mariadbd", where+" or in "+sbin)
		}
	}
	return installDB, server, nil
}

func errNoMariaDB(program, where string) error {
	return fmt.Errorf("%w: no %s %s: run `make deps` (Debian/Ubuntu: apt-get install -y mariadb-server; macOS: brew install mariadb) or set MARIADB_BIN_DIR",
		ErrNoMariaDB, program, where)
}

// StartMariaDB makes the directory dir/mariadb, creates a data directory in it with
// mariadb-install-db (or from this process's copy of the first one it made), starts
// mariadbd on a free loopback port and returns once the server answers a query. The whole
// start is bounded by ctx and by 30 seconds; when it fails, nothing is left running
// or on disk and the error quotes the server's log.
func StartMariaDB(ctx context.Context, dir string) (*MariaDB, error) {
	if dir == "" {
		return nil, errors.New("start mariadb: dir is empty")
	}
	installDB, server, err := MariaDBPath()
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	// mariadbd runs in its data directory, where a relative path would mean something else.
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, backendkit.MariaDBStartCap)
	defer cancel()

	m, err := newMariaDB(dir)
	if err != nil {
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	create := func(ctx context.Context) error { return m.install(ctx, installDB) }
	if err := makeDataDir(ctx, installDB, m.dataDir(), nil, create); err != nil {
		os.RemoveAll(m.dir)
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	for trial := 1; ; trial++ {
		port, err := backendkit.FreeLoopbackPort()
		if err == nil {
			m.server = server
			err = m.start(ctx, server, port)
		}
		if err == nil {
			break
		}
		// A free port can be taken by someone else between our probe and mariadbd's bind.
		if errors.Is(err, proc.ErrPortTaken) && trial < proc.PortTrials {
			continue
		}
		os.RemoveAll(m.dir)
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	connector, err := mysql.NewConnector(m.cfg)
	if err != nil {
		m.Stop()
		return nil, fmt.Errorf("start mariadb: %w", err)
	}
	m.db = sql.OpenDB(connector)
	return m, nil
}

// newMariaDB makes the directories of a MariaDB in dir.
func newMariaDB(dir string) (*MariaDB, error) {
	m := &MariaDB{dir: filepath.Join(dir, mariaDBDirName)}
	m.clock = proc.NewClock(filepath.Join(m.dir, "clock"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Mkdir, not MkdirAll: two servers sharing a data directory would corrupt it.
	if err := os.Mkdir(m.dir, 0o700); err != nil {
		return nil, err
	}
	for _, sub := range []string{m.dataDir(), m.tmpDir()} {
		if err := os.Mkdir(sub, 0o700); err != nil {
			os.RemoveAll(m.dir)
			return nil, err
		}
	}
	return m, nil
}

func (m *MariaDB) dataDir() string { return filepath.Join(m.dir, "data") }
func (m *MariaDB) tmpDir() string  { return filepath.Join(m.dir, "tmp") }
func (m *MariaDB) logPath() string { return filepath.Join(m.dir, mariaDBLogName) }

// Addr returns "127.0.0.1:port".
func (m *MariaDB) Addr() string { return m.addr }

// Pid is the server's process while it runs (cluster.ServerProcess), or 0.
func (m *MariaDB) Pid() int { return m.proc.RunningPid() }

// DSN returns a data source name for sql.Open("mysql", dsn) with
// github.com/go-sql-driver/mysql, as root with no default database.
func (m *MariaDB) DSN() string { return m.cfg.FormatDSN() }

// Driver is "mysql": DSN is github.com/go-sql-driver/mysql's.
func (m *MariaDB) Driver() string { return "mysql" }

// DB returns a connection pool, as root with no default database, for the harness's
// own use (setup, checks). Stop closes it.
func (m *MariaDB) DB() *sql.DB { return m.db }

// Stop kills mariadbd, closes DB and removes the server's directory.
// It can be called more than once.
func (m *MariaDB) Stop() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil
	}
	// A kill, not a shutdown: the data is thrown away, so there is nothing to save.
	// ESRCH: it exited on its own.
	if err := syscall.Kill(-m.proc.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop mariadb: %w", err)
	}
	<-m.proc.Done()
	m.stopped = true
	// After the kill, not before: Close waits for queries in flight, and a query
	// blocked on a row lock would make it wait forever.
	if m.db != nil {
		_ = m.db.Close() // the server is gone; errors from closing connections tell nothing
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("stop mariadb: %w", err)
	}
	return nil
}

// Kill crashes mariadbd with SIGKILL, as a node fault does: its sessions,
// and every GET_LOCK they held, are gone; what InnoDB committed stays on
// disk (cluster.ServerRestarter).
func (m *MariaDB) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return errors.New("kill mariadb: stopped")
	}
	if err := syscall.Kill(-m.proc.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill mariadb: %w", err)
	}
	<-m.proc.Done()
	return nil
}

// Restart runs mariadbd again on its port with its data directory, once
// Kill has crashed it: InnoDB recovers what was committed.
func (m *MariaDB) Restart(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return errors.New("restart mariadb: stopped")
	}
	ctx, cancel := context.WithTimeout(ctx, backendkit.MariaDBStartCap)
	defer cancel()
	if err := m.start(ctx, m.server, m.port); err != nil {
		return fmt.Errorf("restart mariadb: %w", err)
	}
	return nil
}

// SetupInventory creates the table locklab.inventory (id INT PRIMARY KEY, stock BIGINT)
// as needed and sets the stock of its one row, id 1, to stock. Calling it again
// resets the stock.
func (m *MariaDB) SetupInventory(ctx context.Context, stock int64) error {
	return backendkit.SetupInventory(ctx, m.db, stock)
}

// Admin is DB, as cluster.Database names it.
func (m *MariaDB) Admin() *sql.DB { return m.db }

// Stock returns the committed stock of row 1 of locklab.inventory.
func (m *MariaDB) Stock(ctx context.Context) (int64, error) {
	return backendkit.Stock(ctx, m.db)
}

// install runs mariadb-install-db on the empty data directory.
// On failure nothing it started is left running.
func (m *MariaDB) install(ctx context.Context, installDB string) error {
	logFile, err := os.OpenFile(m.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()

	args := []string{
		"--no-defaults", // first, or the system's my.cnf (sockets in /run, logs in /var) applies
		"--datadir=" + m.dataDir(),
		"--tmpdir=" + m.tmpDir(),
		"--auth-root-authentication-method=normal", // root with no password, over TCP too
		"--skip-test-db",
		"--force", // skips resolving the host name, which fails on a host without DNS
	}
	if os.Geteuid() == 0 {
		// mariadbd runs as root only when told to. -u goes through to mariadbd; the
		// script's own --user would also chown the system's PAM plugin directory.
		args = append(args, "-uroot")
	}
	args = append(args, backendkit.MariaDBInnoDBArgs()...)
	cmd := exec.CommandContext(ctx, installDB, args...)
	cmd.Dir = m.dataDir()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// install-db is a shell script that pipes SQL into mariadbd --bootstrap: kill the
	// whole group on cancel. Pdeathsig reaches only the script; if the harness dies,
	// the bootstrap server ends by itself once its input runs out.
	proc.Prepare(cmd)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	// Wait has reaped only the script: the rest of its group, killed by Cancel,
	// may still be dying, and must be gone before the caller removes its directory.
	if cmd.Process != nil {
		proc.WaitGroupGone(cmd.Process.Pid)
	}
	return fmt.Errorf("%s: %w; log:\n%s", filepath.Base(installDB), err, installErrors(m.logPath()))
}

// installErrors returns the lines of the install log that report an error, or its
// tail when none does: mariadb-install-db follows the bootstrap server's error with
// a page of advice that would push it out of any tail.
func installErrors(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	var errs []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, "ERROR") {
			errs = append(errs, strings.TrimRight(line, "\n"))
		}
	}
	if len(errs) == 0 {
		return proc.LogTail(path, 0, mariaDBLogTailLines)
	}
	return strings.Join(errs[max(0, len(errs)-mariaDBLogTailLines):], "\n")
}

// start runs mariadbd once on port and waits until it answers a query.
// On failure nothing is left running and the error carries the log tail.
func (m *MariaDB) start(ctx context.Context, server string, port int) error {
	logPath := m.logPath()
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	info, err := logFile.Stat()
	if err != nil {
		logFile.Close()
		return err
	}
	logStart := info.Size()

	m.port = port
	m.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	m.cfg = mysql.NewConfig()
	m.cfg.User = "root"
	m.cfg.Net = "tcp"
	m.cfg.Addr = m.addr
	m.cfg.Timeout = backendkit.SQLDialTimeout

	args := []string{
		"--no-defaults", // first, or the system's my.cnf applies
		"--datadir=" + m.dataDir(),
		"--tmpdir=" + m.tmpDir(),
		"--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		// Relative to the data directory, where the server runs: an absolute path
		// in a deep temporary directory can pass the 107 bytes a socket path may have.
		"--socket=" + mariaDBSocketName,
		"--skip-name-resolve",
		// MariaDB 11.6 turned this on: a write to a row changed since the snapshot
		// then fails instead of being a lost update, which would hide the pitfall
		// this server is for. loose-: versions without the option ignore it.
		"--loose-innodb-snapshot-isolation=OFF",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root") // mariadbd refuses to run as root otherwise
	}
	args = append(args, backendkit.MariaDBInnoDBArgs()...)
	// Not exec.CommandContext: the server must outlive ctx, which bounds only the start.
	cmd := exec.Command(server, args...)
	cmd.Dir = m.dataDir()
	clockEnv, err := m.clock.Env()
	if err != nil {
		return err
	}
	if clockEnv != nil {
		cmd.Env = append(os.Environ(), clockEnv...)
	}
	// Without --log-error mariadbd logs to stderr.
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	proc.Prepare(cmd)
	err = cmd.Start()
	logFile.Close() // the child has its own copy
	if err != nil {
		return err
	}
	p := proc.Watch(cmd)
	m.clock.Watch(p)
	m.proc = p

	err = m.waitReady(ctx, p)
	if err == nil {
		return nil
	}
	if kerr := syscall.Kill(-p.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		return errors.Join(err, kerr)
	}
	<-p.Done()
	tail := proc.LogTail(logPath, logStart, mariaDBLogTailLines)
	if strings.Contains(tail, "Address already in use") {
		err = fmt.Errorf("%w (%w)", err, proc.ErrPortTaken)
	}
	return fmt.Errorf("mariadbd on port %d: %w; log tail:\n%s", port, err, tail)
}

// JumpClock moves the server's wall clock forward by d, for good (a
// restart keeps it), its monotonic clock untouched (cluster.ClockJumper):
// libfaketime, preloaded into mariadbd, reads the offset at every reading.
func (m *MariaDB) JumpClock(d time.Duration) error {
	if err := m.clock.Jump(d); err != nil {
		return fmt.Errorf("jump the clock of mariadbd on port %d: %w", m.port, err)
	}
	return nil
}

// waitReady polls until the server of p answers a query on m.addr, p exits, or ctx ends.
func (m *MariaDB) waitReady(ctx context.Context, p *proc.Process) error {
	dirInfo, err := os.Stat(m.dataDir())
	if err != nil {
		return err
	}
	probeCfg := m.cfg.Clone()
	// Refused and cut connections are what a starting server gives; don't log them.
	probeCfg.Logger = log.New(io.Discard, "", 0)
	connector, err := mysql.NewConnector(probeCfg)
	if err != nil {
		return err
	}
	probe := sql.OpenDB(connector)
	defer probe.Close()

	// When the server exits, end a probe in flight at once: the port it failed to
	// bind may belong to a program that accepts connections and never greets, such
	// as a Redis node, and the probe would wait there until ctx ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.Done():
			cancel()
		case <-ctx.Done():
		}
	}()

	tick := time.NewTicker(mariaDBReadyPoll)
	defer tick.Stop()
	for {
		err := m.probe(ctx, probe, dirInfo)
		if err == nil {
			return nil
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		}
		if p.Exited() {
			if p.Err() == nil {
				return errors.New("mariadbd exited before answering")
			}
			return fmt.Errorf("mariadbd exited before answering: %w", p.Err())
		}
		return fmt.Errorf("mariadbd did not answer: %w (last attempt: %v)", ctx.Err(), err)
	}
}

// probe returns nil when our server answers on m.addr. It checks the data directory
// because when our server fails to bind, another one may hold the port and answer
// in its place.
func (m *MariaDB) probe(ctx context.Context, db *sql.DB, dirInfo os.FileInfo) error {
	var datadir string
	if err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&datadir); err != nil {
		return err
	}
	// SameFile, not a string compare: the server may report a path with symlinks resolved.
	if info, err := os.Stat(datadir); err != nil || !os.SameFile(info, dirInfo) {
		return fmt.Errorf("the server on %s serves %s, not %s", m.addr, datadir, m.dataDir())
	}
	return nil
}
