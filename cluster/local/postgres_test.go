package local

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startTestPostgres starts PostgreSQL in a fresh temporary directory and
// stops it when the test ends. A missing PostgreSQL fails the test: CI must
// not pass by skipping.
func startTestPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	p, err := StartPostgres(tb.Context(), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Stop(); err != nil {
			tb.Error(err)
		}
	})
	return p
}

// postgresPIDs are the processes running the postgres binary.
func postgresPIDs(t *testing.T, server string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == server {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

func TestPostgresStartsAnswersAndStopsClean(t *testing.T) {
	_, server, err := PostgresPath()
	if err == nil {
		// /proc/PID/exe names the binary itself, past any link to it.
		server, err = filepath.EvalSymlinks(server)
	}
	if err != nil {
		t.Fatal(err)
	}
	before := postgresPIDs(t, server)
	dir := t.TempDir()
	start := time.Now()
	p, err := StartPostgres(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %s", time.Since(start).Round(time.Millisecond))
	ctx := t.Context()
	if err := p.SetupInventory(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if stock, err := p.Stock(ctx); err != nil || stock != 7 {
		t.Fatalf("Stock = %d, %v; want 7", stock, err)
	}
	var user string
	if err := p.Admin().QueryRowContext(ctx, "SELECT current_user").Scan(&user); err != nil || user != postgresUser {
		t.Fatalf("current_user = %q, %v", user, err)
	}
	// The server's children run in sessions of their own: Stop must end
	// them too, not only the postmaster.
	if got := postgresPIDs(t, server); len(got) < len(before)+2 {
		t.Fatalf("postgres processes: %v before, %v running; want the postmaster and its children", before, got)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if got := postgresPIDs(t, server); len(got) != len(before) {
		t.Errorf("postgres processes after Stop: %v; before the start: %v", got, before)
	}
	if _, err := os.Stat(filepath.Join(dir, postgresDirName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the server's directory is still there: %v", err)
	}
}

func TestPostgresTwoAtOnce(t *testing.T) {
	a, b := startTestPostgres(t), startTestPostgres(t)
	if a.Addr() == b.Addr() {
		t.Fatalf("both on %s", a.Addr())
	}
	if err := a.SetupInventory(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := b.SetupInventory(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if s, err := a.Stock(t.Context()); err != nil || s != 1 {
		t.Fatalf("a's stock = %d, %v; want 1 (b's write must not reach it)", s, err)
	}
}

// Debian keeps the programs off PATH, in /usr/lib/postgresql/VERSION/bin.
func TestPostgresPathFindsDebiansDirectory(t *testing.T) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		t.Skip("no /usr/lib/postgresql/*/bin/initdb here")
	}
	t.Setenv("PATH", t.TempDir())
	initdb, server, err := PostgresPath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(initdb, "/usr/lib/postgresql/") || filepath.Dir(server) != filepath.Dir(initdb) {
		t.Errorf("PostgresPath() = %s, %s; want both from one /usr/lib/postgresql/*/bin", initdb, server)
	}
}

func TestPostgresPathSaysHowToInstall(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("POSTGRES_BIN_DIR", empty)
	_, _, err := PostgresPath()
	if !errors.Is(err, ErrNoPostgres) || !strings.Contains(err.Error(), "apt-get install -y postgresql") ||
		!strings.Contains(err.Error(), empty) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error = %v; want one line wrapping ErrNoPostgres with the install hint and the directory", err)
	}
	if _, err := StartPostgres(t.Context(), t.TempDir()); !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("StartPostgres: %v; want ErrNoPostgres", err)
	}
}

// A failed start leaves nothing, and says why: here initdb fails.
func TestPostgresFailedStartLeavesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand the directory to another user")
	}
	dir := t.TempDir()
	// In dir, whose search permission the start gives the server's user.
	fake := filepath.Join(dir, "bin")
	if err := os.Mkdir(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	// An initdb that fails at once, next to a postgres that would run.
	for name, body := range map[string]string{"initdb": "#!/bin/sh\necho initdb broke >&2\nexit 3\n", "postgres": "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("POSTGRES_BIN_DIR", fake)
	_, err := StartPostgres(t.Context(), dir)
	if err == nil || !strings.Contains(err.Error(), "initdb broke") {
		t.Fatalf("StartPostgres = %v; want an error quoting initdb's log", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, postgresDirName)); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the server's directory is left: %v", serr)
	}
}

func BenchmarkPostgresStart(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		p, err := StartPostgres(b.Context(), dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}
