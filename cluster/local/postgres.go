package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local/proc"
	"github.com/locklab/locklab/network"
)

// ErrNoPostgres means no usable PostgreSQL installation was found.
// PostgresPath wraps it, so callers can tell a missing dependency from a
// failed run; it is cluster.ErrNoPostgres, which the docker backend wraps
// too.
var ErrNoPostgres = cluster.ErrNoPostgres

const (
	postgresDirName = "postgres"
	postgresLogName = "postgres.log"
	// postgresUser is the server's superuser, which initdb makes and
	// every client logs in as, with no password (-A trust): it listens on
	// loopback only and lives for one run, like the Redis nodes.
	postgresUser     = "postgres"
	postgresDB       = "postgres"
	postgresReady    = 5 * time.Millisecond
	postgresStopCap  = 5 * time.Second
	postgresLogLines = 20
)

// Postgres is one PostgreSQL server (the postmaster and its children) on
// 127.0.0.1 with its own data directory. Its methods may be called from
// several goroutines.
type Postgres struct {
	dir  string // Dir/postgres: data and the log
	port int
	addr string
	db   *sql.DB

	mu      sync.Mutex // serializes Stop, Kill and Restart
	proc    *proc.Process
	stopped bool
	// server and cred are how it was started, for Restart.
	server string
	cred   *syscall.Credential
	// clock is the server's wall clock, which JumpClock moves: now(), and
	// with it the expiry of a lock row kept in the server's time.
	clock *proc.Clock
}

// PostgresPath returns the programs StartPostgres runs, initdb and
// postgres: from $POSTGRES_BIN_DIR when set, else from PATH, else from
// the newest /usr/lib/postgresql/*/bin, where Debian and Ubuntu put them
// (off PATH). The error says how to install them.
func PostgresPath() (initdb, server string, err error) {
	dir := os.Getenv("POSTGRES_BIN_DIR")
	where := "in POSTGRES_BIN_DIR=" + dir
	dirs := []string{dir}
	if dir == "" {
		where = "on PATH or in /usr/lib/postgresql/*/bin"
		dirs = []string{""}
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		// Newest first: "15" before "9.6", by major version.
		slices.SortFunc(found, func(a, b string) int { return pgMajor(b) - pgMajor(a) })
		dirs = append(dirs, found...)
	}
	for _, d := range dirs {
		initdb, ok := proc.FindProgram(d, "initdb")
		if !ok {
			continue
		}
		// The server next to the initdb found: versions must match.
		if server, ok = proc.FindProgram(filepath.Dir(initdb), "postgres"); ok {
			return initdb, server, nil
		}
	}
	return "", "", fmt.Errorf("%w: no initdb and postgres %s: run `make deps` (Debian/Ubuntu: apt-get install -y postgresql; macOS: brew install postgresql) or set POSTGRES_BIN_DIR",
		ErrNoPostgres, where)
}

// pgMajor is the major version in a path /usr/lib/postgresql/MAJOR/bin.
func pgMajor(bin string) int {
	n, _ := strconv.Atoi(strings.SplitN(filepath.Base(filepath.Dir(bin)), ".", 2)[0])
	return n
}

// postgresCredential is whom the server runs as: PostgreSQL refuses to
// run as root, so as root it runs as the system user postgres that the
// package makes, else as nobody; as anyone else, as that user (nil).
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, err)
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, fmt.Errorf("postgres refuses to run as root, and there is no user to run it as: %w", errors.Join(errs...))
}

// StartPostgres makes the directory dir/postgres, creates a cluster in it
// with initdb, starts postgres on a free loopback port and returns once the
// server answers a query. The whole start is bounded by ctx and by 30
// seconds; when it fails, nothing is left running or on disk and the error
// quotes the server's log.
func StartPostgres(ctx context.Context, dir string) (_ *Postgres, err error) {
	if dir == "" {
		return nil, errors.New("start postgres: dir is empty")
	}
	initdb, server, err := PostgresPath()
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, backendkit.MariaDBStartCap)
	defer cancel()
	p := &Postgres{dir: filepath.Join(dir, postgresDirName), server: server, cred: cred}
	p.clock = proc.NewClock(filepath.Join(p.dir, "clock"))
	if err := p.makeDir(cred); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(p.dir)
		}
	}()
	create := func(ctx context.Context) error { return p.initdb(ctx, initdb, cred) }
	if err := makeDataDir(ctx, initdb, p.dataDir(), cred, create); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	for trial := 1; ; trial++ {
		// Out of the ephemeral range, where any outgoing connection of the
		// machine could take it between our probe and the server's bind.
		port, err := network.StablePort()
		if err == nil {
			if err = p.start(ctx, server, port, cred); err != nil {
				network.ReleasePort(port)
			}
		}
		if err == nil {
			break
		}
		if errors.Is(err, proc.ErrPortTaken) && trial < proc.PortTrials {
			continue
		}
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return p, nil
}

// makeDir makes p.dir, owned by whom the server runs as. That user must
// reach it: directories on the way that this process owns under the
// system's temp folder (the run directory, a test's TempDir) get search
// permission for others, which lets them pass through, not list.
func (p *Postgres) makeDir(cred *syscall.Credential) error {
	if err := os.MkdirAll(filepath.Dir(p.dir), 0o755); err != nil {
		return err
	}
	// Mkdir, not MkdirAll: two servers sharing a data directory would corrupt it.
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		return err
	}
	if cred == nil {
		return nil
	}
	if err := os.Chown(p.dir, int(cred.Uid), int(cred.Gid)); err != nil {
		os.RemoveAll(p.dir)
		return err
	}
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Dir(p.dir); strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err != nil {
			break
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != os.Geteuid() || info.Mode().Perm()&0o001 != 0 {
			continue
		}
		if err := os.Chmod(d, info.Mode().Perm()|0o001); err != nil {
			os.RemoveAll(p.dir)
			return err
		}
	}
	return nil
}

func (p *Postgres) dataDir() string { return filepath.Join(p.dir, "data") }
func (p *Postgres) logPath() string { return filepath.Join(p.dir, postgresLogName) }

// command is a program of the server's run as cred, in its own process
// group, killed if the harness dies, with its output in the log.
func (p *Postgres) command(name string, cred *syscall.Credential, args ...string) (*exec.Cmd, *os.File, error) {
	logFile, err := os.OpenFile(p.logPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// LANG and LC_*: C, so that initdb needs no locale of the system's.
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	proc.Prepare(cmd)
	cmd.SysProcAttr.Credential = cred
	return cmd, logFile, nil
}

// initdb makes the cluster's data directory. -A trust: no password, as
// for the other servers; --no-sync: the data lives for one run; WAL
// segments of 1 MB rather than 16: initdb writes the first one out in
// full, which took a fifth of its time here.
func (p *Postgres) initdb(ctx context.Context, initdb string, cred *syscall.Credential) error {
	cmd, logFile, err := p.command(initdb, cred, "-D", p.dataDir(), "-A", "trust", "-U", postgresUser,
		"--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C", "--wal-segsize=1")
	if err != nil {
		return err
	}
	defer logFile.Close()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// initdb runs postgres in bootstrap mode as its child, in its group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = errors.Join(ctx.Err(), <-done)
		proc.WaitGroupGone(cmd.Process.Pid)
	}
	if err != nil {
		return fmt.Errorf("initdb: %w; log tail:\n%s", err, proc.LogTail(p.logPath(), 0, postgresLogLines))
	}
	return nil
}

// serverArgs are the server's arguments: the settings both backends share
// (backendkit.PostgresSettings), TCP on loopback only, and no Unix socket
// (a deep temporary directory can pass the 107 bytes a socket path may
// have).
func serverArgs(dataDir string, port int) []string {
	args := []string{"-D", dataDir, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="}
	for _, set := range backendkit.PostgresSettings() {
		args = append(args, "-c", set)
	}
	return args
}

// start runs postgres once on port and waits until it answers a query.
// On failure nothing is left running and the error carries the log tail.
func (p *Postgres) start(ctx context.Context, server string, port int, cred *syscall.Credential) error {
	// The log so far is initdb's, or none when the data came from the
	// template.
	var logStart int64
	if info, err := os.Stat(p.logPath()); err == nil {
		logStart = info.Size()
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	p.port = port
	p.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// Not tied to ctx: the server must outlive it, which bounds only the start.
	cmd, logFile, err := p.command(server, cred, serverArgs(p.dataDir(), port)...)
	if err != nil {
		return err
	}
	clockEnv, err := p.clock.Env()
	if err != nil {
		logFile.Close()
		return err
	}
	cmd.Env = append(cmd.Env, clockEnv...)
	err = cmd.Start()
	logFile.Close() // the child has its own copy
	if err != nil {
		return err
	}
	srv := proc.Watch(cmd)
	p.clock.Watch(srv)
	p.proc = srv
	if err = p.waitReady(ctx, srv); err == nil {
		return nil
	}
	p.kill()
	tail := proc.LogTail(p.logPath(), logStart, postgresLogLines)
	if strings.Contains(tail, "Address already in use") {
		err = fmt.Errorf("%w (%w)", err, proc.ErrPortTaken)
	}
	return fmt.Errorf("postgres on port %d: %w; log tail:\n%s", port, err, tail)
}

// JumpClock moves the server's wall clock forward by d, for good (a
// restart keeps it), its monotonic clock untouched (cluster.ClockJumper):
// libfaketime, preloaded into postgres and so into every backend it
// forks, reads the offset at every reading.
func (p *Postgres) JumpClock(d time.Duration) error {
	if err := p.clock.Jump(d); err != nil {
		return fmt.Errorf("jump the clock of postgres on port %d: %w", p.port, err)
	}
	return nil
}

// config is the pgx configuration of a connection to the server as its
// superuser, with every timeout at most timeout.
func (p *Postgres) config(timeout time.Duration) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(p.DSN())
	if err != nil {
		return nil, err
	}
	cfg.ConnectTimeout = timeout
	return cfg, nil
}

// waitReady polls until the server of proc answers a query on p.addr,
// proc exits, or ctx ends. It checks the data directory, because when our
// server fails to bind, another one may hold the port and answer in its
// place.
func (p *Postgres) waitReady(ctx context.Context, srv *proc.Process) error {
	dirInfo, err := os.Stat(p.dataDir())
	if err != nil {
		return err
	}
	cfg, err := p.config(time.Second)
	if err != nil {
		return err
	}
	// When the server exits, end a probe in flight at once.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-srv.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	probe := func() error {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		var dataDir string
		if err := conn.QueryRow(ctx, "SELECT current_setting('data_directory')").Scan(&dataDir); err != nil {
			return err
		}
		if info, err := os.Stat(dataDir); err != nil || !os.SameFile(info, dirInfo) {
			return fmt.Errorf("the server on %s serves %s, not %s", p.addr, dataDir, p.dataDir())
		}
		return nil
	}
	tick := time.NewTicker(postgresReady)
	defer tick.Stop()
	for {
		err := probe()
		if err == nil {
			break
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		}
		if srv.Exited() {
			return fmt.Errorf("postgres exited before answering: %w", srv.Err())
		}
		return fmt.Errorf("postgres did not answer: %w (last attempt: %v)", ctx.Err(), err)
	}
	// Not the probe's 1 s: on a machine loaded by two busy yes and the
	// test suite, the admin pool's new connections took longer.
	cfg.ConnectTimeout = backendkit.SQLDialTimeout
	p.db = stdlib.OpenDB(*cfg.Copy())
	return nil
}

// kill ends the server: an immediate shutdown (SIGQUIT), which ends its
// children too, since each runs in a session of its own that a signal to
// the postmaster's group would miss; SIGKILL if it has not ended within
// a few seconds. It waits until the postmaster is gone.
func (p *Postgres) kill() {
	srv := p.proc
	if srv == nil || srv.Exited() {
		return
	}
	_ = syscall.Kill(srv.Pid, syscall.SIGQUIT)
	select {
	case <-srv.Done():
		return
	case <-time.After(postgresStopCap):
	}
	_ = syscall.Kill(-srv.Pid, syscall.SIGKILL)
	<-srv.Done()
}

// Kill crashes the server as a node fault does: an immediate shutdown
// (SIGQUIT: no checkpoint, every backend ends at once, SIGKILL if they
// linger), so that its sessions and their advisory locks are gone and
// what was committed is recovered from the WAL (cluster.ServerRestarter).
func (p *Postgres) Kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return errors.New("kill postgres: stopped")
	}
	// The run's server commits asynchronously and skips fsync for speed
	// (backendkit.PostgresSettings), so a crash could lose the lock table
	// itself; a checkpoint first makes it lose only what a server with
	// durable commits loses: its sessions.
	ctx, cancel := context.WithTimeout(context.Background(), postgresStopCap)
	defer cancel()
	if _, err := p.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("kill postgres: checkpoint first: %w", err)
	}
	p.kill()
	return nil
}

// Restart runs the server again on its port with its data, once Kill has
// crashed it.
func (p *Postgres) Restart(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return errors.New("restart postgres: stopped")
	}
	ctx, cancel := context.WithTimeout(ctx, backendkit.MariaDBStartCap)
	defer cancel()
	if err := p.start(ctx, p.server, p.port, p.cred); err != nil {
		return fmt.Errorf("restart postgres: %w", err)
	}
	return nil
}

// Addr returns "127.0.0.1:port".
func (p *Postgres) Addr() string { return p.addr }

// Pid is the server's process while it runs (cluster.ServerProcess), or 0.
func (p *Postgres) Pid() int { return p.proc.RunningPid() }

// Driver is "pgx": DSN is for github.com/jackc/pgx/v5/stdlib.
func (p *Postgres) Driver() string { return "pgx" }

// DSN is a postgres:// URL of the server as its superuser, in the
// database postgres, without TLS (the server has none; asking would cost
// a round trip per connection).
func (p *Postgres) DSN() string {
	u := url.URL{Scheme: "postgres", User: url.User(postgresUser), Host: p.addr, Path: "/" + postgresDB,
		RawQuery: "sslmode=disable"}
	return u.String()
}

// Admin is a pool past any link, as the superuser, for the harness's own
// use (setup, checks). Stop closes it.
func (p *Postgres) Admin() *sql.DB { return p.db }

// SetupInventory creates the table locklab.inventory (id INT PRIMARY KEY,
// stock BIGINT) as needed and sets the stock of its one row, id 1, to
// stock. Calling it again resets the stock.
func (p *Postgres) SetupInventory(ctx context.Context, stock int64) error {
	return backendkit.SetupPostgresInventory(ctx, p.db, stock)
}

// Stock returns the committed stock of row 1 of locklab.inventory.
func (p *Postgres) Stock(ctx context.Context) (int64, error) {
	return backendkit.Stock(ctx, p.db)
}

// Stop ends the server, closes Admin and removes the server's directory.
// It can be called more than once.
func (p *Postgres) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	p.kill()
	p.stopped = true
	network.ReleasePort(p.port)
	// After the kill, not before: Close waits for queries in flight.
	if p.db != nil {
		_ = p.db.Close() // the server is gone; errors from closing connections tell nothing
	}
	if err := os.RemoveAll(p.dir); err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	return nil
}
