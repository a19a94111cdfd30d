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
