package local

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/locklab/locklab/cluster/local/proc"
)

// startTestMariaDB starts MariaDB in a fresh temporary directory and stops it when
// the test ends. A missing MariaDB fails the test: CI must not pass by skipping.
func startTestMariaDB(tb testing.TB) *MariaDB {
	tb.Helper()
	m, err := StartMariaDB(tb.Context(), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := m.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return m
}

var repeatableRead = &sql.TxOptions{Isolation: sql.LevelRepeatableRead}

const (
	selectStock    = "SELECT stock FROM locklab.inventory WHERE id = 1"
	selectStockFor = selectStock + " FOR UPDATE"
	updateStock    = "UPDATE locklab.inventory SET stock = ? WHERE id = 1"
)

func beginTx(tb testing.TB, ctx context.Context, db *sql.DB) *sql.Tx {
	tb.Helper()
	tx, err := db.BeginTx(ctx, repeatableRead)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tx.Rollback() }) // after Commit it does nothing
	return tx
}

func readStock(tb testing.TB, ctx context.Context, tx *sql.Tx, query string) int64 {
	tb.Helper()
	var stock int64
	if err := tx.QueryRowContext(ctx, query).Scan(&stock); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return stock
}

func writeStockAndCommit(tb testing.TB, ctx context.Context, tx *sql.Tx, stock int64) {
	tb.Helper()
	if _, err := tx.ExecContext(ctx, updateStock, stock); err != nil {
		tb.Fatalf("UPDATE stock = %d: %v", stock, err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatalf("COMMIT: %v", err)
	}
}

func wantStock(tb testing.TB, ctx context.Context, m *MariaDB, want int64) {
	tb.Helper()
	got, err := m.Stock(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if got != want {
		tb.Errorf("final stock = %d, want %d", got, want)
	}
}

// TestMariaDBLostUpdate shows that the server reproduces the transaction pitfall:
// under REPEATABLE READ a plain SELECT takes no lock, so two transactions that both
// read 10 and write 9 lose one sale.
func TestMariaDBLostUpdate(t *testing.T) {
	t.Parallel()
	m := startTestMariaDB(t)
	if want := "127.0.0.1:"; !strings.HasPrefix(m.Addr(), want) || !strings.Contains(m.DSN(), "tcp("+m.Addr()+")") {
		t.Errorf("Addr() = %q, DSN() = %q; want an address on 127.0.0.1 that the DSN dials", m.Addr(), m.DSN())
	}
	ctx := within(t, 10*time.Second)
	if err := m.SetupInventory(ctx, 10); err != nil {
		t.Fatal(err)
	}

	tx1 := beginTx(t, ctx, m.DB())
	tx2 := beginTx(t, ctx, m.DB())
	s1 := readStock(t, ctx, tx1, selectStock)
	s2 := readStock(t, ctx, tx2, selectStock)
	if s1 != 10 || s2 != 10 {
		t.Fatalf("reads = %d, %d; want 10, 10", s1, s2)
	}
	writeStockAndCommit(t, ctx, tx1, s1-1)
	writeStockAndCommit(t, ctx, tx2, s2-1)
	wantStock(t, ctx, m, 9)

	// SetupInventory again resets the stock for the next run.
	if err := m.SetupInventory(ctx, 10); err != nil {
		t.Fatal(err)
	}
	wantStock(t, ctx, m, 10)
}

// TestMariaDBSelectForUpdate is the fix: a locking read makes the second
// transaction wait for the first one's commit and read its write.
func TestMariaDBSelectForUpdate(t *testing.T) {
	t.Parallel()
	m := startTestMariaDB(t)
	ctx := within(t, 10*time.Second)
	if err := m.SetupInventory(ctx, 10); err != nil {
		t.Fatal(err)
	}

	tx1 := beginTx(t, ctx, m.DB())
	tx2 := beginTx(t, ctx, m.DB())
	s1 := readStock(t, ctx, tx1, selectStockFor)
	// The row is locked now: a locking read elsewhere cannot go ahead. NOWAIT says
	// so at once, where INNODB_TRX does not always list a waiting reader.
	var stock int64
	err := m.DB().QueryRowContext(ctx, selectStockFor+" NOWAIT").Scan(&stock)
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) || myErr.Number != 1205 {
		t.Fatalf("locking read NOWAIT while another transaction holds the row = (%d, %v); want error 1205, lock wait timeout", stock, err)
	}

	type read struct {
		stock int64
		err   error
	}
	second := make(chan read, 1)
	go func() {
		var r read
		r.err = tx2.QueryRowContext(ctx, selectStockFor).Scan(&r.stock)
		second <- r
	}()
	// Commit only once the server runs the second read, so that it reads 9 because
	// it waited, not because it came late.
	for running := 0; running == 0; {
		err := m.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = ?", selectStockFor).Scan(&running)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-second:
			t.Fatalf("locking read returned (%d, %v) while the other transaction held the row", r.stock, r.err)
		case <-ctx.Done():
			t.Fatal("the server never ran the second locking read")
		case <-time.After(time.Millisecond):
		}
	}
	writeStockAndCommit(t, ctx, tx1, s1-1)

	var r read
	select {
	case r = <-second:
	case <-ctx.Done():
		t.Fatal("locking read still blocked after the other transaction committed")
	}
	if r.err != nil || s1 != 10 || r.stock != 9 {
		t.Fatalf("reads = %d, (%d, %v); want 10, 9", s1, r.stock, r.err)
	}
	writeStockAndCommit(t, ctx, tx2, r.stock-1)
	wantStock(t, ctx, m, 8)
}

func TestMariaDBStop(t *testing.T) {
	t.Parallel()
	m := startTestMariaDB(t)
	pid, dir := m.proc.Pid, m.dir

	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory after Stop: %v; want it removed", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) after Stop = %v; want ESRCH", pid, err)
	}
	// The bootstrap server of mariadb-install-db is not our child; look for any process
	// that still names the data directory.
	if holders := processesNaming(t, dir); len(holders) > 0 {
		t.Errorf("processes still running on %s after Stop: %v", dir, holders)
	}
	if err := m.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := m.DB().PingContext(within(t, time.Second)); err == nil {
		t.Error("DB().Ping after Stop succeeded; want the pool closed")
	}
}

// processesNaming returns the pids of processes whose command line contains s.
// Where there is no /proc it returns nothing.
func processesNaming(tb testing.TB, s string) []int {
	tb.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestMariaDBDirTaken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mariadb"), 0o700); err != nil {
		t.Fatal(err)
	}
	if m, err := StartMariaDB(t.Context(), dir); err == nil {
		m.Stop()
		t.Fatal("StartMariaDB on a directory that already has mariadb/ succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "mariadb")); err != nil {
		t.Errorf("StartMariaDB removed a directory it does not own: %v", err)
	}
}

// TestMariaDBPortTaken checks what StartMariaDB's retry on another port relies on:
// a bind failure is reported as proc.ErrPortTaken and leaves no server running.
func TestMariaDBPortTaken(t *testing.T) {
	t.Parallel()
	installDB, server, err := MariaDBPath()
	if err != nil {
		t.Fatal(err)
	}
	m, err := newMariaDB(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := within(t, 30*time.Second)
	if err := m.install(ctx, installDB); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	err = m.start(ctx, server, l.Addr().(*net.TCPAddr).Port)
	if !errors.Is(err, proc.ErrPortTaken) || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("start on a taken port: %v; want proc.ErrPortTaken and the log line", err)
	}
	if err := syscall.Kill(m.proc.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) after a failed start = %v; want ESRCH", m.proc.Pid, err)
	}
}

// TestMariaDBStartCanceled checks that a start cut short by its context, here in
// mariadb-install-db, leaves nothing running or on disk.
func TestMariaDBStartCanceled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	m, err := StartMariaDB(ctx, dir)
	if err == nil {
		m.Stop()
		t.Fatal("StartMariaDB within 100ms succeeded; the test needs a slower start")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("StartMariaDB within 100ms: %v; want context.DeadlineExceeded", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mariadb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory after a canceled start: %v; want it removed", err)
	}
	if holders := processesNaming(t, dir); len(holders) > 0 {
		t.Errorf("processes still running on %s after a canceled start: %v", dir, holders)
	}
}

func TestMariaDBPathMissing(t *testing.T) {
	t.Setenv("PATH", "")
	t.Setenv("MARIADB_BIN_DIR", "")
	os.Unsetenv("MARIADB_BIN_DIR")

	_, _, err := MariaDBPath()
	if !errors.Is(err, ErrNoMariaDB) {
		t.Fatalf("MariaDBPath() error = %v; want ErrNoMariaDB", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "make deps") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming `make deps`", msg)
	}
}

func TestMariaDBPathBinDir(t *testing.T) {
	installDB, server, err := MariaDBPath()
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv("MARIADB_BIN_DIR", filepath.Dir(installDB))
	gotInstallDB, gotServer, err := MariaDBPath()
	if err != nil || gotInstallDB != installDB || gotServer != server {
		t.Errorf("with MARIADB_BIN_DIR=%s: MariaDBPath() = %q, %q, %v; want %q, %q",
			filepath.Dir(installDB), gotInstallDB, gotServer, err, installDB, server)
	}

	empty := t.TempDir()
	t.Setenv("MARIADB_BIN_DIR", empty)
	_, _, err = MariaDBPath()
	if !errors.Is(err, ErrNoMariaDB) || !strings.Contains(err.Error(), "MARIADB_BIN_DIR="+empty) {
		t.Errorf("with an empty MARIADB_BIN_DIR: error = %v; want ErrNoMariaDB naming the directory", err)
	}
}

// TestMariaDBFromTemplate: a start after the first writes out the data
// directory mariadb-install-db made, as it was before any server ran on it:
// what one server wrote is not in the next one's data.
func TestMariaDBFromTemplate(t *testing.T) {
	ctx := t.Context()
	first := startTestMariaDB(t)
	if err := first.SetupInventory(ctx, 7); err != nil {
		t.Fatal(err)
	}
	second := startTestMariaDB(t)
	var n int
	if err := second.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'locklab'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the second server has the first one's database locklab")
	}
	if err := second.SetupInventory(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    *MariaDB
		want int64
	}{{first, 7}, {second, 3}} {
		if got, err := c.m.Stock(ctx); err != nil || got != c.want {
			t.Errorf("%s: Stock = %d, %v; want %d", c.m.Addr(), got, err, c.want)
		}
	}
}

// BenchmarkStartMariaDB is the start-up and tear-down of one MariaDB: its
// data directory (install-db for the process's first, then the template),
// mariadbd, the first query, kill and removal.
func BenchmarkStartMariaDB(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		m, err := StartMariaDB(b.Context(), dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMariaDBClockJumpEveryConnection: a jump reaches the NOW() of every
// connection at once and for good, each connection a thread of mariadbd.
// A lock whose expiry is NOW() counts on it: one connection reading the
// clock without the jump deletes another's row as expired.
func TestMariaDBClockJumpEveryConnection(t *testing.T) {
	if proc.Libfaketime() == "" {
		t.Skip("libfaketime is not installed")
	}
	m := startTestMariaDB(t)
	const jump = 2 * time.Second
	if err := m.JumpClock(jump); err != nil {
		t.Fatal(err)
	}
	const conns, reads = 8, 300
	m.DB().SetMaxOpenConns(conns)
	errs := make(chan error, conns)
	for range conns {
		go func() {
			for range reads {
				before := time.Now()
				var now float64
				if err := m.DB().QueryRowContext(t.Context(), "SELECT UNIX_TIMESTAMP(NOW(6))").Scan(&now); err != nil {
					errs <- err
					return
				}
				if ahead := time.Unix(0, int64(now*1e9)).Sub(before); ahead < jump-time.Second/2 {
					errs <- fmt.Errorf("NOW() read %s ahead of the real clock, not %s", ahead, jump)
					return
				}
			}
			errs <- nil
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
