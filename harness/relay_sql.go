package harness

// Statement is Command for one SQL statement of a lock program, its words
// args, named by the first as the client's own statements are (sqlConn):
// it counts on no lock node, and no word is a Redis setup command (an SQL
// SELECT is the lock's). send returns nil and, for an error the server
// answered, an error.
func (r *Relay) Statement(args []string, send func() (reply any, err error)) error {
	return r.command(-1, args, false, send)
}
