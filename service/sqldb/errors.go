package sqldb

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrorNumber is the number of MariaDB's error err (1205 for a lock wait
// timeout, say), and false when err is none: so that a lock written for
// the service names no driver's type.
func ErrorNumber(err error) (uint16, bool) {
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) {
		return me.Number, true
	}
	return 0, false
}

// SQLState is the SQLSTATE of PostgreSQL's error err ("55P03" for
// lock_not_available, say), and false when err is none.
func SQLState(err error) (string, bool) {
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
		return pe.Code, true
	}
	return "", false
}

// Logger is what the MariaDB driver logs to.
type Logger = mysql.Logger

// SetLogger sets what the MariaDB driver logs to: the command line
// quiets it, since a connection that broke under a fault is the history's
// to record, not stderr's.
func SetLogger(l Logger) error { return mysql.SetLogger(l) }
