package relay

import (
	"testing"

	"github.com/locklab/locklab/harness"
)

// TestRows: a statement's reply says how many rows it changed, from
// PostgreSQL's command tag and MariaDB's OK packet, and nothing from
// another reply.
func TestRows(t *testing.T) {
	tag := func(s string) []byte {
		n := len(s) + 1 + 4
		return append([]byte{'C', 0, 0, byte(n >> 8), byte(n)}, append([]byte(s), 0)...)
	}
	ok := func(payload ...byte) []byte {
		return append([]byte{byte(len(payload)), 0, 0, 1}, payload...)
	}
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"a DELETE's tag", pgRows(tag("DELETE 1")), harness.RowsChanged(1)},
		{"an UPDATE that found none", pgRows(tag("UPDATE 0")), harness.RowsChanged(0)},
		{"an INSERT's tag", pgRows(tag("INSERT 0 1")), harness.RowsChanged(1)},
		{"a SELECT's tag", pgRows(tag("SELECT 1")), nil},
		{"an OK packet", myRows(ok(0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00)), harness.RowsChanged(1)},
		{"an OK packet of none", myRows(ok(0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00)), harness.RowsChanged(0)},
		{"an error packet", myRows(ok(0xff, 0x01, 0x02)), nil},
		{"a result set", myRows(ok(0x01)), nil},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
