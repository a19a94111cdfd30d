package workshop

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/reports"
)

// TestQuizKey: the quiz has legal and illegal histories of 5 to 10 lock
// operations, and its key is what the lock checker says of each one as
// shown, overlapping holds included.
func TestQuizKey(t *testing.T) {
	runs, err := reports.LoadRuns(from())
	if err != nil {
		t.Fatal(err)
	}
	qs := Quiz(runs)
	legal, illegal := 0, 0
	for _, q := range qs {
		n := 0
		for _, op := range q.Ops {
			if op.Kind != history.KindFault {
				n++
			}
		}
		if n < minOps || n > maxOps {
			t.Errorf("history %d has %d lock operations, want %d to %d", q.N, n, minOps, maxOps)
		}
		lock := checker.Run(q.Ops, checker.Options{}).Checks[0]
		if got := lock.Verdict == checker.OK; got != q.Legal || lock.Verdict == checker.Unknown {
			t.Errorf("history %d: key says legal=%v, the lock checker %s", q.N, q.Legal, lock.Verdict)
		}
		a, b, overlap := checker.FirstOverlap(q.Ops)
		if overlap == q.Legal || (!q.Legal && (a != q.Earlier || b != q.Later)) {
			t.Errorf("history %d: key %q, the checker's first overlap %v %+v %+v", q.N, q.Answer(), overlap, a, b)
		}
		if q.Legal {
			legal++
		} else {
			illegal++
		}
	}
	if legal == 0 || illegal == 0 {
		t.Errorf("%d legal and %d illegal histories; want some of each", legal, illegal)
	}
	var text bytes.Buffer
	if err := WriteQuizText(&text, qs, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "History 1:") || strings.Contains(text.String(), "legal: ") {
		t.Errorf("the quiz as text shows no history, or its answers:\n%s", text.String())
	}
}
