// Package backendkit holds what the cluster package and its backends
// (cluster/local, cluster/docker) do alike and nothing else needs: polling
// until a server answers, finding a free loopback port, and the settings and
// inventory table of MariaDB, which both backends run. It lives apart so that
// the backends need not import each other.
package backendkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/locklab/locklab/cluster"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// AdminCap bounds how long WaitAdmin waits for a node's admin client.
	AdminCap = 5 * time.Second
	// MariaDBStartCap bounds the start of a MariaDB server, from nothing to
	// answering a query.
	MariaDBStartCap = 30 * time.Second
	// SQLDialTimeout is the dial timeout of the backends' admin
	// connections to MariaDB and PostgreSQL.
	SQLDialTimeout = 5 * time.Second

	pollPeriod = 5 * time.Millisecond
)

// PollUntil calls check every few milliseconds until it reports nothing left
// to wait for (an empty string) or fails, or ctx ends; the error then says
// what it was still waiting for (cluster.PollUntil, which the services'
// packages use too).
func PollUntil(ctx context.Context, what string, check func(ctx context.Context) (waiting string, err error)) error {
	return cluster.PollEvery(ctx, pollPeriod, what, check)
}

// PollEvery is PollUntil at its own pace: check runs every period.
func PollEvery(ctx context.Context, period time.Duration, what string, check func(ctx context.Context) (waiting string, err error)) error {
	return cluster.PollEvery(ctx, period, what, check)
}

// WaitAdmin polls until admin answers PING, bounded by ctx and AdminCap.
func WaitAdmin(ctx context.Context, admin *redis.Client) error {
	ctx, cancel := context.WithTimeout(ctx, AdminCap)
	defer cancel()
	// admin retries a failed command itself, after backoffs of up to half a
	// second; a probe that does not keeps to the poll's period.
	opt := admin.Options()
	probe := redis.NewClient(&redis.Options{
		Addr: opt.Addr, Dialer: opt.Dialer, DialTimeout: opt.DialTimeout, Protocol: opt.Protocol,
		ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 1,
	})
	defer probe.Close()
	tick := time.NewTicker(pollPeriod)
	defer tick.Stop()
	// Then admin itself, whose pool stops dialling for a second after
	// failed dials: it must work when this returns.
	for _, c := range []*redis.Client{probe, admin} {
		for {
			err := c.Ping(ctx).Err()
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return err
			case <-tick.C:
			}
		}
	}
	return nil
}

// FreeLoopbackPort returns a loopback port that was free a moment ago.
func FreeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// MariaDBInnoDBArgs are the storage settings of both the bootstrap and the
// server, so that the server finds the redo log at the size it wants; the
// docker backend's image is bootstrapped with them too (docker/build.sh). They
// trade durability for speed: the data lives for one run, and no fault
// touches MariaDB itself.
func MariaDBInnoDBArgs() []string {
	return []string{
		"--innodb-buffer-pool-size=16M",
		"--innodb-log-file-size=8M", // the default, 96 MiB, is written out for every run
		"--innodb-flush-log-at-trx-commit=2",
		"--skip-innodb-doublewrite",
		"--skip-log-bin",
	}
}

// PostgresSettings are the settings (postgres -c) of a PostgreSQL server on
// either backend: fast rather than durable (the data lives for one run and
// no fault strikes the server's disk), dynamic shared memory in the data
// directory (so that a killed server leaves nothing in /dev/shm), no JIT
// (the docker image has no LLVM) and no autovacuum (a run is seconds long).
// A backend adds where the server listens.
func PostgresSettings() []string {
	return []string{
		"fsync=off",
		"synchronous_commit=off",
		"full_page_writes=off",
		"wal_level=minimal",
		"max_wal_senders=0",
		"shared_buffers=16MB",
		"max_connections=60",
		"dynamic_shared_memory_type=mmap",
		"autovacuum=off",
		"jit=off",
		"logging_collector=off",
	}
}

// SetupInventory creates the table locklab.inventory (id INT PRIMARY KEY,
// stock BIGINT) in db as needed and sets the stock of its one row, id 1, to
// stock. Calling it again resets the stock.
func SetupInventory(ctx context.Context, db *sql.DB, stock int64) error {
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS locklab",
		"CREATE TABLE IF NOT EXISTS locklab.inventory (id INT PRIMARY KEY, stock BIGINT NOT NULL) ENGINE=InnoDB",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mariadb: set up inventory: %w", err)
		}
	}
	const upsert = "INSERT INTO locklab.inventory (id, stock) VALUES (1, ?) ON DUPLICATE KEY UPDATE stock = VALUES(stock)"
	if _, err := db.ExecContext(ctx, upsert, stock); err != nil {
		return fmt.Errorf("mariadb: set up inventory: %w", err)
	}
	return nil
}

// SetupPostgresInventory is SetupInventory on PostgreSQL, whose locklab is
// a schema of the database postgres.
func SetupPostgresInventory(ctx context.Context, db *sql.DB, stock int64) error {
	for _, q := range []string{
		"CREATE SCHEMA IF NOT EXISTS locklab",
		"CREATE TABLE IF NOT EXISTS locklab.inventory (id INT PRIMARY KEY, stock BIGINT NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("postgres: set up inventory: %w", err)
		}
	}
	const upsert = "INSERT INTO locklab.inventory (id, stock) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET stock = EXCLUDED.stock"
	if _, err := db.ExecContext(ctx, upsert, stock); err != nil {
		return fmt.Errorf("postgres: set up inventory: %w", err)
	}
	return nil
}

// Stock returns the committed stock of row 1 of locklab.inventory in db.
func Stock(ctx context.Context, db *sql.DB) (int64, error) {
	var stock int64
	if err := db.QueryRowContext(ctx, "SELECT stock FROM locklab.inventory WHERE id = 1").Scan(&stock); err != nil {
		return 0, fmt.Errorf("mariadb: read stock: %w", err)
	}
	return stock, nil
}

// AwaitValue polls a node, through its admin client, until key holds want
// ("" for absent) or ctx ends; node names it in the error.
func AwaitValue(ctx context.Context, admin *redis.Client, node, key, want string) error {
	err := PollUntil(ctx, "await "+key+" on "+node, func(ctx context.Context) (string, error) {
		got, err := admin.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			got, err = "", nil
		}
		if err != nil || got != want {
			return "GET " + key + " = " + got, nil
		}
		return "", nil
	})
	if err != nil {
		return fmt.Errorf("%w; want %q", err, want)
	}
	return nil
}

// ZooKeeperConfig is the zoo.cfg of a ZooKeeper server on either backend,
// whose data lives in dataDir and which serves clients at clientAddr:clientPort;
// peers are its ensemble's server.N lines. Ticks of 100 ms let a session be
// as short as 200 ms (two ticks) and a dead leader be noticed within a second
// (syncLimit); fsync is off, since a SIGKILL keeps what the page cache has
// (no fault crashes the machine) and two shared cores make every fsync slow.
func ZooKeeperConfig(dataDir, clientAddr string, clientPort int, peers []string) string {
	cfg := []string{
		"tickTime=100", "initLimit=100", "syncLimit=10",
		"minSessionTimeout=200", "maxSessionTimeout=60000",
		"dataDir=" + dataDir,
		"clientPortAddress=" + clientAddr, "clientPort=" + strconv.Itoa(clientPort),
		"preAllocSize=64", "forceSync=no",
		"4lw.commands.whitelist=srvr,mntr,ruok",
		"admin.enableServer=false",
		"maxClientCnxns=0",
	}
	return strings.Join(append(cfg, peers...), "\n") + "\n"
}

// ZooKeeperJVMArgs start QuorumPeerMain with the config file cfg, quickly
// and small: the client compiler only, a small heap, the shared class
// archive, no perf data file. classPath is the server's jar and, where
// present, a logger's.
func ZooKeeperJVMArgs(classPath, cfg string) []string {
	return []string{
		"-Xms32m", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-XX:-UsePerfData",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-cp", classPath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg,
	}
}
