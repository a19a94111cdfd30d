package checker

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// withReplies interleaves each acquire and release of ops with the replies
// of five lock nodes, as a Redlock run records them: yes, no, an error
// reply, no reply at all, and a renewal's reply that lands after the end
// record; and with a request, as a SQL, etcd or memcached lock's are
// recorded, answered after the end record.
func withReplies(ops []history.Op) []history.Op {
	last := history.Last(ops)
	var out []history.Op
	for _, op := range ops {
		if op.Kind == history.KindAcquire || op.Kind == history.KindRelease {
			ret := history.Returned(op, last)
			for node := range 5 {
				r := history.Op{Client: op.Client, Kind: history.KindReply, Key: op.Key, Node: node, Command: "SET NX PX",
					Call: op.Call, Return: op.Call + (ret-op.Call)/2, Outcome: models.OK, Probe: op.Probe}
				switch node {
				case 1:
					r.Outcome = models.Failed
				case 2:
					r.Outcome, r.Error = "", "ERR something"
				case 3:
					r.Outcome, r.Return, r.Error = "", history.NeverReturned, "i/o timeout"
				case 4:
					r.Command, r.Call, r.Return = "PEXPIRE", last+5, last+6
				}
				out = append(out, r)
			}
			out = append(out, history.Op{Client: op.Client, Kind: history.KindRequest, Key: op.Key, Command: "DELETE",
				Call: op.Call, Return: last + 7, Outcome: models.OK, Phase: "release", Probe: op.Probe})
		}
		out = append(out, op)
	}
	return out
}

// TestRepliesChangeNothing re-checks the golden histories with reply ops
// interleaved: every checker, the stats and the holds judge them exactly
// as without. The kind's judgement reads replies node by node on purpose
// (nodes_test.go), so it is left out here.
func TestRepliesChangeNothing(t *testing.T) {
	const golden = "../reports/testdata/report"
	runs, err := filepath.Glob(filepath.Join(golden, "*", "history.jsonl"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no golden histories: %v", err)
	}
	for _, path := range runs {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			ops, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			more := withReplies(ops)
			if len(more) == len(ops) {
				t.Fatal("no replies added")
			}
			if history.Last(more) != history.Last(ops) {
				t.Errorf("Last moved: %v, want %v", history.Last(more), history.Last(ops))
			}
			opts := Options{Initial: history.EndOf(ops).Initial}
			if got, want := Run(more, opts).Checks, Run(ops, opts).Checks; !reflect.DeepEqual(got, want) {
				t.Errorf("checks with replies:\n%+v\nwithout:\n%+v", got, want)
			}
			same := func(name string, got, want any) {
				t.Helper()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s with replies:\n%+v\nwithout:\n%+v", name, got, want)
				}
			}
			same("Measure", Measure(more), Measure(ops))
			same("Holds", Holds(more), Holds(ops))
			a, b, ok := FirstOverlap(more)
			a0, b0, ok0 := FirstOverlap(ops)
			same("FirstOverlap", [3]any{a, b, ok}, [3]any{a0, b0, ok0})
			la, lb, ok := FirstLostUpdate(more)
			la0, lb0, ok0 := FirstLostUpdate(ops)
			same("FirstLostUpdate", [3]any{la, lb, ok}, [3]any{la0, lb0, ok0})
		})
	}
	if _, err := os.Stat(golden); err != nil {
		t.Fatal(err)
	}
}
