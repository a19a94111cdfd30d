package relay

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestReadMCRequest(t *testing.T) {
	add := "add lock 0 2 5\r\nc0-11\r\n"
	type want struct {
		words []string
		raw   string
		reply mcReply
		setup bool
	}
	tests := []struct {
		name string
		in   string
		want []want
		err  error // after the requests: io.EOF, io.ErrUnexpectedEOF or a protocolError
	}{
		{"add and its data", add, []want{{[]string{"add", "lock", "0", "2", "5"}, add, mcLine, false}}, io.EOF},
		{"binary-safe data", "set k 0 0 4\r\na\r\nb\r\n", []want{{[]string{"set", "k", "0", "0", "4"}, "set k 0 0 4\r\na\r\nb\r\n", mcLine, false}}, io.EOF},
		{"a pipeline in one write", add + "gets lock\r\ncas lock 0 -1 5 77\r\nc0-11\r\n", []want{
			{[]string{"add", "lock", "0", "2", "5"}, add, mcLine, false},
			{[]string{"gets", "lock"}, "gets lock\r\n", mcEnd, false},
			{[]string{"cas", "lock", "0", "-1", "5", "77"}, "cas lock 0 -1 5 77\r\nc0-11\r\n", mcLine, false},
		}, io.EOF},
		{"noreply", "delete lock noreply\r\nset k 0 0 1 noreply\r\nx\r\n", []want{
			{[]string{"delete", "lock", "noreply"}, "delete lock noreply\r\n", mcQuiet, false},
			{[]string{"set", "k", "0", "0", "1", "noreply"}, "set k 0 0 1 noreply\r\nx\r\n", mcQuiet, false},
		}, io.EOF},
		{"meta, quiet and not", "ms lock 2 T2 q\r\nc0\r\nmg lock v\r\nmd lock q\r\nmn\r\n", []want{
			{[]string{"ms", "lock", "2", "T2", "q"}, "ms lock 2 T2 q\r\nc0\r\n", mcQuiet, false},
			{[]string{"mg", "lock", "v"}, "mg lock v\r\n", mcLine, false},
			{[]string{"md", "lock", "q"}, "md lock q\r\n", mcQuiet, false},
			{[]string{"mn"}, "mn\r\n", mcLine, true},
		}, io.EOF},
		{"a key named q is no flag", "mg q v\r\n", []want{{[]string{"mg", "q", "v"}, "mg q v\r\n", mcLine, false}}, io.EOF},
		{"upkeep and stats", "version\nstats\r\nstats reset\r\n\r\n", []want{
			{[]string{"version"}, "version\n", mcLine, true},
			{[]string{"stats"}, "stats\r\n", mcEnd, true},
			{[]string{"stats", "reset"}, "stats reset\r\n", mcLine, true},
			{nil, "\r\n", mcLine, true},
		}, io.EOF},
		{"streams", "watch\r\n", []want{{[]string{"watch"}, "watch\r\n", mcStream, false}}, io.EOF},
		{"a storage line too short has no data", "set k 0\r\n", []want{{[]string{"set", "k", "0"}, "set k 0\r\n", mcLine, false}}, io.EOF},
		{"cut inside the data", "add lock 0 2 5\r\nc0", nil, io.ErrUnexpectedEOF},
		{"cut inside a line", "get lo", nil, io.ErrUnexpectedEOF},
		{"a bad length", "add lock 0 2 x\r\nc0\r\n", nil, protocolError("")},
		{"a negative length", "add lock 0 2 -1\r\n\r\n", nil, protocolError("")},
		{"data without its CRLF", "add lock 0 2 2\r\nc0xx", nil, protocolError("")},
	}
	for _, tt := range tests {
		for how, r := range readers(tt.in) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				for i, w := range tt.want {
					req, err := readMCRequest(r)
					if err != nil {
						t.Fatalf("request %d: %v", i, err)
					}
					if !slices.Equal(req.words, w.words) || string(req.raw) != w.raw || req.reply != w.reply || req.setup != w.setup {
						t.Errorf("request %d: %q %q reply %d setup %v, want %q %q reply %d setup %v",
							i, req.words, req.raw, req.reply, req.setup, w.words, w.raw, w.reply, w.setup)
					}
				}
				_, err := readMCRequest(r)
				wantEnd(t, err, tt.err)
			})
		}
	}
}

func TestReadMCReply(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		kind      mcReply
		reply     string // what the program is handed
		serverErr string // "" for none
		err       error  // what broke the reading
	}{
		{"stored", "STORED\r\nnext", mcLine, "STORED\r\n", "", nil},
		{"not stored", "NOT_STORED\r\n", mcLine, "NOT_STORED\r\n", "", nil},
		{"an error", "CLIENT_ERROR bad data chunk\r\n", mcLine, "CLIENT_ERROR bad data chunk\r\n", "memcached: CLIENT_ERROR bad data chunk", nil},
		{"items up to END", "VALUE lock 0 6 77\r\nc\r\n-11\r\nVALUE k 1 0\r\n\r\nEND\r\nnext", mcEnd,
			"VALUE lock 0 6 77\r\nc\r\n-11\r\nVALUE k 1 0\r\n\r\nEND\r\n", "", nil},
		{"a miss", "END\r\n", mcEnd, "END\r\n", "", nil},
		{"stats", "STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n", mcEnd, "STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n", "", nil},
		{"an error ends a get", "SERVER_ERROR out of memory\r\nnext", mcEnd, "SERVER_ERROR out of memory\r\n", "memcached: SERVER_ERROR out of memory", nil},
		{"a meta hit", "VA 2 t3\r\nc0\r\nnext", mcLine, "VA 2 t3\r\nc0\r\n", "", nil},
		{"quiet: nothing but the relay's MN", "MN\r\nnext", mcQuiet, "", "", nil},
		{"quiet: an error, then MN", "ERROR\r\nMN\r\n", mcQuiet, "ERROR\r\n", "memcached: ERROR", nil},
		{"quiet: a hit, then MN", "VA 1\r\nx\r\nMN\r\n", mcQuiet, "VA 1\r\nx\r\n", "", nil},
		{"cut inside an item", "VALUE lock 0 5\r\nc0", mcEnd, "", "", io.ErrUnexpectedEOF},
		{"closed", "", mcLine, "", "", io.EOF},
		{"a bad item length", "VALUE lock 0 x\r\n", mcEnd, "", "", protocolError("")},
		{"a line without CR", "STORED\n", mcLine, "", "", protocolError("")},
	}
	for _, tt := range tests {
		for how, r := range readers(tt.in) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				reply, serverErr, err := readMCReply(r, tt.kind)
				var perr protocolError
				switch {
				case errors.As(tt.err, &perr):
					if !errors.As(err, &perr) {
						t.Errorf("%v, want a protocol error", err)
					}
				case !errors.Is(err, tt.err):
					t.Errorf("%v, want %v", err, tt.err)
				}
				if string(reply) != tt.reply {
					t.Errorf("reply %q, want %q", reply, tt.reply)
				}
				got := ""
				if serverErr != nil {
					got = serverErr.Error()
				}
				if got != tt.serverErr || (serverErr != nil && !isMCServerError(serverErr)) {
					t.Errorf("server error %v, want %q", serverErr, tt.serverErr)
				}
				if tt.err == nil && strings.HasSuffix(tt.in, "next") {
					if rest, _ := io.ReadAll(r); string(rest) != "next" {
						t.Errorf("left %q unread, want the next reply's bytes", rest)
					}
				}
			})
		}
	}
}
