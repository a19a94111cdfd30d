package sqldb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
)

// sessionsEnd bounds how long Reset waits for the clients' sessions to
// end once their links are gone.
const sessionsEnd = 5 * time.Second

// Queries of Reset and Clean, by dialect.
var (
	// sessionsQuery counts the clients' sessions on the server, the
	// asking one included, none of the server's own threads.
	sessionsQuery = map[Dialect]string{
		MySQL: "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND <> 'Daemon' AND USER NOT IN ('system user', 'event_scheduler')",
		Pgx:   "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'",
	}
	// tablesQuery lists the tables a run may have written or made:
	// locklab's, which stay and are emptied, and any other of a user,
	// which a fresh server has not, and go.
	tablesQuery = map[Dialect]string{
		MySQL: "SELECT CONCAT('`', TABLE_SCHEMA, '`.`', TABLE_NAME, '`'), TABLE_SCHEMA = 'locklab' FROM information_schema.TABLES " +
			"WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')",
		Pgx: "SELECT format('%I.%I', schemaname, tablename), schemaname = 'locklab' FROM pg_tables " +
			"WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
	}
)

// Reset waits until the sessions of the run's clients are gone, which the
// end of their links ends, with the named, advisory and row locks they
// held; then empties locklab's tables, their counters back to the start,
// and drops any other table a run made (cluster.Resetter).
func (d *deployment) Reset(ctx context.Context) error {
	// A session that outlives its link this long is not one of a run's
	// clients, and the server is not reused.
	waitCtx, cancel := context.WithTimeout(ctx, sessionsEnd)
	defer cancel()
	if err := cluster.PollUntil(waitCtx, "reset: await the clients' sessions' end", func(ctx context.Context) (string, error) {
		return d.otherSessions(ctx)
	}); err != nil {
		return err
	}
	tables, err := d.tables(ctx)
	if err != nil {
		return err
	}
	for table, ours := range tables {
		q := "DROP TABLE " + table
		switch {
		case ours && d.dialect == Pgx:
			q = "TRUNCATE " + table + " RESTART IDENTITY"
		case ours:
			q = "TRUNCATE " + table // which restarts AUTO_INCREMENT too
		}
		if _, err := d.db.Admin().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("reset: %s: %w", q, err)
		}
	}
	return nil
}

// Clean reports a session of a client left, a table a run made, a row
// of locklab's tables or, on PostgreSQL, an advisory lock held
// (cluster.Resetter).
func (d *deployment) Clean(ctx context.Context) error {
	switch left, err := d.otherSessions(ctx); {
	case err != nil:
		return err
	case left != "":
		return errors.New(left)
	}
	tables, err := d.tables(ctx)
	if err != nil {
		return err
	}
	for table, ours := range tables {
		if !ours {
			return fmt.Errorf("table %s left", table)
		}
		var rows bool
		if err := d.db.Admin().QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+table+")").Scan(&rows); err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		if rows {
			return fmt.Errorf("rows left in %s", table)
		}
	}
	if d.dialect == Pgx {
		var advisory int
		if err := d.db.Admin().QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&advisory); err != nil {
			return fmt.Errorf("read the advisory locks: %w", err)
		}
		if advisory > 0 {
			return fmt.Errorf("%d advisory locks held", advisory)
		}
	}
	return nil
}

// otherSessions says how many sessions the server has beyond the
// connections of locklab's own pool (Admin), or "" when none.
func (d *deployment) otherSessions(ctx context.Context) (string, error) {
	admin := d.db.Admin()
	var n int
	if err := admin.QueryRowContext(ctx, sessionsQuery[d.dialect]).Scan(&n); err != nil {
		return "", fmt.Errorf("count the sessions: %w", err)
	}
	if own := admin.Stats().OpenConnections; n > own {
		return fmt.Sprintf("%d sessions of clients left", n-own), nil
	}
	return "", nil
}

// tables lists the user tables on the server, each true when it is
// locklab's.
func (d *deployment) tables(ctx context.Context) (map[string]bool, error) {
	rows, err := d.db.Admin().QueryContext(ctx, tablesQuery[d.dialect])
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	defer rows.Close()
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		var ours bool
		if err := rows.Scan(&name, &ours); err != nil {
			return nil, fmt.Errorf("list the tables: %w", err)
		}
		tables[name] = ours
	}
	return tables, rows.Err()
}
