package harness

// Statement is Command for one SQL statement of a lock program, its words
// args, named by the first as the client's own statements are (sqlConn):
// it counts on no lock node, and no word is a Redis setup command (an SQL
// SELECT is the lock's). send returns nil, or the RowsChanged its reply
// said, and, for an error the server answered, an error.
func (r *Relay) Statement(args []string, send func() (reply any, err error)) error {
	return r.command(-1, args, false, send)
}

// RowsChanged is what a relayed SQL statement's send returns when the
// server's reply said how many rows the statement changed (MariaDB's OK
// packet, PostgreSQL's command tag): the request's record keeps it, as a
// Go lock's statement's (Client.StatementRows).
type RowsChanged int64
