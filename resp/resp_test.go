package resp

import (
	"bufio"
	"strings"
	"testing"
)

// TestAppend: a value read and appended anew comes out as it came
// (attributes left out), and a changed string comes out with its new
// length.
func TestAppend(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"simple string", "+OK\r\n", ""},
		{"error", "-ERR no\r\n", ""},
		{"integer", ":-42\r\n", ""},
		{"bulk string", "$4\r\na\r\nb\r\n", ""},
		{"null bulk", "$-1\r\n", ""},
		{"null array", "*-1\r\n", ""},
		{"nested array", "*3\r\n*2\r\n:1\r\n$1\r\na\r\n*0\r\n*1\r\n*1\r\n+x\r\n", ""},
		{"RESP3 null", "_\r\n", ""},
		{"RESP3 boolean", "#t\r\n", ""},
		{"RESP3 double", ",3.14\r\n", ""},
		{"RESP3 big number", "(3492890328409238509324850943850943825024385\r\n", ""},
		{"RESP3 blob error", "!21\r\nSYNTAX invalid syntax\r\n", ""},
		{"RESP3 verbatim", "=15\r\ntxt:Some string\r\n", ""},
		{"RESP3 map", "%2\r\n+first\r\n:1\r\n+second\r\n*2\r\n:2\r\n#f\r\n", ""},
		{"RESP3 set", "~2\r\n+a\r\n+b\r\n", ""},
		{"RESP3 push", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", ""},
		{"RESP3 attribute left out", "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n:1\r\n", ":1\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ReadValue(bufio.NewReader(strings.NewReader(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := string(v.Append(nil)); got != want {
				t.Errorf("Append: %q, want %q", got, want)
			}
		})
	}
	v, err := ReadValue(bufio.NewReader(strings.NewReader("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	v.Elems[1].Str = "40001"
	if got, want := string(v.Append(nil)), "*2\r\n$9\r\n127.0.0.1\r\n$5\r\n40001\r\n"; got != want {
		t.Errorf("changed: %q, want %q", got, want)
	}
}
