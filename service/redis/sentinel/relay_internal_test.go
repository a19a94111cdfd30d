package sentinel

import (
	"bufio"
	"strings"
	"testing"

	"github.com/locklab/locklab/resp"
)

// TestRename: each way Sentinel names a data node is renamed to the
// program's relay to it; addresses that name no data node, and replies
// that name none, pass as they came.
func TestRename(t *testing.T) {
	s := &Relay{to: map[string]string{"127.0.0.1:6379": "127.0.0.1:40001", "n2:6379": "127.0.0.1:40002"}}
	// bulk is words as an array of bulk strings, as Sentinel answers.
	bulk := func(words ...string) string { return string(resp.EncodeCommand(words)) }
	tests := []struct {
		name, in, want string
	}{
		{"GET-MASTER-ADDR-BY-NAME", bulk("127.0.0.1", "6379"), bulk("127.0.0.1", "40001")},
		{"a node by its network name", bulk("n2", "6379"), bulk("127.0.0.1", "40002")},
		{"a Sentinel's own address", bulk("127.0.0.1", "26379"), ""},
		{"MASTERS", "*1\r\n" + bulk("name", "locklab", "ip", "127.0.0.1", "port", "6379", "flags", "master"),
			"*1\r\n" + bulk("name", "locklab", "ip", "127.0.0.1", "port", "40001", "flags", "master")},
		{"REPLICAS", "*1\r\n" + bulk("name", "127.0.0.1:6379", "ip", "127.0.0.1", "port", "6379", "master-host", "n2", "master-port", "6379"),
			"*1\r\n" + bulk("name", "127.0.0.1:40001", "ip", "127.0.0.1", "port", "40001", "master-host", "127.0.0.1", "master-port", "40002")},
		{"RESP3 map", "%2\r\n+ip\r\n+127.0.0.1\r\n+port\r\n+6379\r\n", "%2\r\n+ip\r\n+127.0.0.1\r\n+port\r\n+40001\r\n"},
		{"+switch-master", bulk("message", "+switch-master", "locklab 127.0.0.1 26000 n2 6379"),
			bulk("message", "+switch-master", "locklab 127.0.0.1 26000 127.0.0.1 40002")},
		{"a pattern's message", bulk("pmessage", "*", "+sdown", "slave 127.0.0.1:6379 127.0.0.1 6379 @ locklab n2 6379"),
			bulk("pmessage", "*", "+sdown", "slave 127.0.0.1:40001 127.0.0.1 40001 @ locklab 127.0.0.1 40002")},
		{"a status", "+OK\r\n", ""},
		{"an integer", ":1\r\n", ""},
		{"a null", "*-1\r\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := resp.ReadValue(bufio.NewReader(strings.NewReader(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := string(s.rewritten(v)); got != want {
				t.Errorf("rewritten\n%q, want\n%q", got, want)
			}
		})
	}
}
