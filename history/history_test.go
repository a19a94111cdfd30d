package history

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/models"
)

func TestWriteThenRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Op{
		{Client: 0, Kind: KindAcquire, Key: "lock", Call: 1, Return: 2, Outcome: models.OK},
		{Client: 1, Kind: KindAcquire, Key: "lock", Call: 3, Return: NeverReturned, Outcome: models.Unknown},
		{Client: 1, Kind: KindReply, Key: "lock", Call: 4, Return: 5, Node: 3, Command: "SET NX PX", Outcome: models.Failed},
		{Client: 1, Kind: KindFault, Call: 6, Return: 7, Fault: "client pause", FaultKind: "pause", Target: &Target{Type: TargetClient},
			Failpoint: "before release command 1", Phase: "release", Command: "DEL"},
		{Client: -1, Kind: KindFault, Call: 6, Return: 8, FaultKind: "kill-master", Part: PartFailover, Target: &Target{Type: TargetNode, Nodes: []int{1, 2}, Role: "master"}},
		{Client: -1, Kind: KindEnd, Call: 9, Return: 9, End: &End{Stock: 5, Spoiled: []string{"x"}}},
	}
	for _, op := range want {
		h.Add(op)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(b), "\n"); first != `{"format":"locklab-history","version":2}` {
		t.Errorf("first line %q", first)
	}
	got, err := Read(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if fromFile, err := ReadFile(path); err != nil || len(fromFile) != len(got) {
		t.Errorf("ReadFile: %d ops, %v; want %d", len(fromFile), err, len(got))
	}
}

func TestReadFileNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	old := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(old); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), old) {
		t.Errorf("old file: %v, want ErrFormat naming %s", err, old)
	}
}

func TestReadRefusesOtherFormats(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"empty", "", "the file is empty"},
		{"before versions", `{"client":0,"kind":"acquire","call_ns":1,"return_ns":2}` + "\n", "before format versions"},
		{"newer version", `{"format":"locklab-history","version":9}` + "\n", "format version 9, this locklab reads versions 1 to 2"},
		{"version 0", `{"format":"locklab-history","version":0}` + "\n", "format version 0"},
		{"not JSON", "hello\n", "first line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.text))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v: want one line wrapping ErrFormat, containing %q", err, tt.want)
			}
		})
	}
}

func TestLastAndReturned(t *testing.T) {
	ops := []Op{{Call: 5, Return: 7}, {Call: 6, Return: NeverReturned}, {Kind: KindReply, Call: 20, Return: 21}}
	last := Last(ops)
	if last != 8 || Returned(ops[1], last) != 8 || Returned(ops[0], last) != 7 {
		t.Errorf("last %d", last)
	}
}

// TestReadVersion1 reads a version-1 history, whose faults were text only,
// and checks the fields filled from its labels, and those left unknown.
func TestReadVersion1(t *testing.T) {
	ops, err := ReadFile(filepath.Join("testdata", "v1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type fields struct {
		kind      string
		part      Part
		target    *Target
		failpoint string
	}
	want := []fields{
		{},
		{kind: "pause", target: &Target{Type: TargetClient}, failpoint: "before DEL (release command 1)"},
		{kind: "clock-jump", target: &Target{Type: TargetNode, Nodes: []int{2}}, failpoint: "critical-section"},
		{kind: "partition", target: &Target{Type: TargetLink, Nodes: []int{3, 4}}},
		{kind: "kill-master", part: PartFailover, target: &Target{Type: TargetNode, Role: "master"}},
		{kind: "slow-work", target: &Target{Type: TargetClient}, failpoint: "critical-section"},
		{}, // a label version 1 never wrote: unknown
		{failpoint: "after-setnx"},
		{},
	}
	if len(ops) != len(want) {
		t.Fatalf("read %d ops, want %d", len(ops), len(want))
	}
	for i, op := range ops {
		got := fields{op.FaultKind, op.Part, op.Target, op.Failpoint}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("op %d (%s %q): %+v, want %+v", i, op.Kind, op.Fault, got, want[i])
		}
	}
	if e := EndOf(ops); e == nil || e.Stock != 9 {
		t.Errorf("end record %+v", e)
	}
}

// TestReadOldNames reads end records under the names End's fields had
// before the words spoiled and missed, in both versions, and under the
// new ones.
func TestReadOldNames(t *testing.T) {
	tests := []struct {
		name            string
		version         int
		end             string
		spoiled, missed []string
	}{
		{"version 1, old names", 1, `{"not_exercised":["a"],"unmet":["b"]}`, []string{"a"}, []string{"b"}},
		{"version 2, old names", 2, `{"not_exercised":["a"],"unmet":["b"]}`, []string{"a"}, []string{"b"}},
		{"version 2, new names", 2, `{"spoiled":["a"],"missed":["b"]}`, []string{"a"}, []string{"b"}},
		{"version 2, neither", 2, `{"stock":3}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"format":"` + Format + `","version":` + strconv.Itoa(tt.version) + "}\n" +
				`{"client":-1,"kind":"end","call_ns":1,"return_ns":1,"end":` + tt.end + "}\n"
			ops, err := Read(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			e := EndOf(ops)
			if e == nil {
				t.Fatal("no end record")
			}
			if !reflect.DeepEqual(e.Spoiled, tt.spoiled) || !reflect.DeepEqual(e.Missed, tt.missed) {
				t.Errorf("spoiled %q, missed %q; want %q, %q", e.Spoiled, e.Missed, tt.spoiled, tt.missed)
			}
		})
	}
}

// TestReadOldLockState: the lock's state as Redis said it (key_exists,
// pttl_ns, -1 for no expiry), which saved histories hold, reads as Held,
// Expires and Left.
func TestReadOldLockState(t *testing.T) {
	tests := []struct {
		end     string
		held    bool
		expires bool
		left    time.Duration
	}{
		{`{"key_exists":false,"pttl_ns":-2}`, false, false, 0},
		{`{"key_exists":true,"pttl_ns":-1}`, true, false, 0},
		{`{"key_exists":true,"pttl_ns":150000000}`, true, true, 150 * time.Millisecond},
		{`{"held":true,"expires":true,"left_ns":2000000000}`, true, true, 2 * time.Second},
	}
	for _, tt := range tests {
		in := `{"format":"` + Format + `","version":1}` + "\n" +
			`{"client":-1,"kind":"end","call_ns":1,"return_ns":1,"end":` + tt.end + "}\n"
		ops, err := Read(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if e := EndOf(ops); e == nil || e.Held != tt.held || e.Expires != tt.expires || e.Left != tt.left {
			t.Errorf("%s: read %+v; want held %v, expires %v, left %v", tt.end, e, tt.held, tt.expires, tt.left)
		}
	}
}

// TestServerEventsAndRows: a server event and a statement's rows are
// written and read back as they were, a statement that changed no row
// kept apart from one that did not say; server events do not move Last.
func TestServerEventsAndRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	zero, one := int64(0), int64(1)
	want := []Op{
		{Client: 0, Kind: KindRequest, Key: "lock", Call: 10, Return: 20, Command: "DELETE", Phase: "release", Outcome: models.OK, Rows: &zero},
		{Client: 1, Kind: KindRequest, Key: "lock", Call: 30, Return: 40, Command: "UPDATE", Phase: "acquire", Outcome: models.OK, Rows: &one},
		{Client: 1, Kind: KindRequest, Key: "lock", Call: 30, Return: 40, Command: "SELECT", Phase: "acquire", Outcome: models.OK},
		{Client: -1, Kind: KindServer, Key: "/locklab/lock/1b", Call: 50, Return: 900,
			Server: &ServerEvent{Event: "delete", Owner: -1, Session: "0x1b", Created: 5, Revision: 9, Gone: true}},
	}
	for _, op := range want {
		h.Add(op)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if last := Last(got); last != 1 {
		t.Errorf("Last %d, want 1: requests and server events do not count", last)
	}
}
