package relay

import (
	"bufio"
	"errors"
	"strings"
	"testing"
)

// TestReadPGMessage: a message is read whole, with its type; a length
// that cannot be, or past the bound, is a protocol error, never an
// allocation of what garbage asks for.
func TestReadPGMessage(t *testing.T) {
	tests := []struct {
		name, in string
		typ      byte
		err      bool
	}{
		{"query", "Q\x00\x00\x00\x0dSELECT 1\x00", 'Q', false},
		{"length below itself", "Q\x00\x00\x00\x02", 0, true},
		{"length past the bound", "Q\x7f\xff\xff\xff", 0, true},
		{"cut short", "Q\x00\x00\x00\x0dSEL", 0, true},
	}
	for _, tt := range tests {
		typ, raw, err := readPGMessage(bufio.NewReader(strings.NewReader(tt.in)))
		if (err != nil) != tt.err || typ != tt.typ || (err == nil && string(raw) != tt.in) {
			t.Errorf("%s: %q %q %v", tt.name, typ, raw, err)
		}
		var perr protocolError
		if tt.name == "length past the bound" && !errors.As(err, &perr) {
			t.Errorf("%s: %v, want a protocol error", tt.name, err)
		}
	}
	e := "E\x00\x00\x00\x20SERROR\x00C55P03\x00Mlock busy\x00\x00"
	if got := pgErrorText([]byte(e)); got != "lock busy" {
		t.Errorf("pgErrorText: %q", got)
	}
}

// pgMsg is one message of type typ whose body is the NUL-terminated
// strings fields followed by tail.
func pgMsg(typ byte, tail string, fields ...string) string {
	body := ""
	for _, f := range fields {
		body += f + "\x00"
	}
	body += tail
	n := len(body) + 4
	return string([]byte{typ, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}) + body
}

// TestPGBatch: a batch of the extended protocol is read up to its Sync
// and named by the query its Execute runs, prepared in the batch or by
// name before it; a prepare alone executes nothing; a Flush ends a batch
// early, for the relay to pipe.
func TestPGBatch(t *testing.T) {
	parse := func(name, q string) string { return pgMsg('P', "\x00\x00", name, q) }
	bind := func(portal, stmt string) string { return pgMsg('B', "\x00\x00\x00\x00\x00\x00", portal, stmt) }
	exec := func(portal string) string { return pgMsg('E', "\x00\x00\x00\x00", portal) }
	sync, flush := pgMsg('S', ""), pgMsg('H', "")
	describe := pgMsg('D', "", "S")
	tests := []struct {
		name    string
		batches []string // read one after the other on one connection
		text    []string
		execute []bool
		last    byte
	}{
		{"unnamed", []string{parse("", "INSERT INTO t VALUES ($1)") + bind("", "") + describe + exec("") + sync},
			[]string{"INSERT INTO t VALUES ($1)"}, []bool{true}, 'S'},
		{"prepared by name, then executed", []string{parse("s1", "SELECT pg_try_advisory_lock($1)") + describe + sync, bind("", "s1") + exec("") + sync},
			[]string{"", "SELECT pg_try_advisory_lock($1)"}, []bool{false, true}, 'S'},
		{"closed", []string{parse("s1", "SELECT 1") + sync, pgMsg('C', "", "Ss1") + sync, bind("", "s1") + exec("") + sync},
			[]string{"", "", ""}, []bool{false, false, true}, 'S'},
		{"a named portal", []string{parse("", "SELECT 2") + bind("p", "") + exec("p") + sync}, []string{"SELECT 2"}, []bool{true}, 'S'},
		{"a flush", []string{parse("", "SELECT 3") + describe + flush}, []string{""}, []bool{false}, 'H'},
	}
	for _, tt := range tests {
		c := &pgConn{stmts: map[string]string{}, portals: map[string]string{}}
		for i, b := range tt.batches {
			in := bufio.NewReader(strings.NewReader(b))
			typ, raw, err := readPGMessage(in)
			if err != nil {
				t.Fatal(err)
			}
			all, text, execute, last, err := c.batch(typ, raw, in)
			if err != nil || string(all) != b || text != tt.text[i] || execute != tt.execute[i] || last != tt.last {
				t.Errorf("%s, batch %d: %q %v %q %v, want %q %v %q", tt.name, i, text, execute, last, err, tt.text[i], tt.execute[i], tt.last)
			}
		}
	}
}
