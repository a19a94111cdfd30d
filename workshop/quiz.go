package workshop

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/runner"
	"github.com/locklab/locklab/timeline"
)

// Sizes of a quiz: how many histories of each answer, and how many lock
// operations each shows.
const (
	quizEach = 4
	minOps   = 5
	maxOps   = 10
)

// Question is one history to judge: a few lock operations cut from a real
// run, and the answer the lock checker gives on exactly those operations.
type Question struct {
	N    int
	From string       // the run folder it was cut from
	Ops  []history.Op // times from the cut's start
	// Legal is the lock checker's verdict on Ops; Earlier and Later are the
	// first two overlapping holds when it is not.
	Legal          bool
	Earlier, Later checker.Hold
	Drawing        template.HTML
}

// Answer is the key of q in one line.
func (q Question) Answer() string {
	if q.Legal {
		return "legal: one holder at a time"
	}
	return fmt.Sprintf("illegal: client %d acquired at %s while client %d held the lock since %s",
		q.Later.Client, msText(q.Later.Start), q.Earlier.Client, msText(q.Earlier.Start))
}

// Quiz cuts up to quizEach illegal histories from broken runs and as many
// legal ones from runs the lock checker passed, mixed in a fixed order, and keys each with
// the lock checker.
func Quiz(runs []reports.Run) []Question {
	var illegal, legal []Question
	for _, r := range runs {
		if r.Result == nil || r.Lock != "" {
			continue
		}
		ops, err := history.ReadFile(filepath.Join(r.ReportDir, runner.HistoryFile))
		if err != nil {
			continue
		}
		var q Question
		var ok bool
		switch {
		case r.Variant == pitfalls.Broken && r.Verdicts[checker.CheckLock] == checker.Illegal && len(illegal) < quizEach:
			q, ok = cutQuestion(ops, true)
		case r.Verdicts[checker.CheckLock] == checker.OK && len(legal) < quizEach:
			q, ok = cutQuestion(ops, false)
		}
		if !ok {
			continue
		}
		q.From = filepath.Base(r.ReportDir)
		if q.Legal {
			legal = append(legal, q)
		} else {
			illegal = append(illegal, q)
		}
	}
	// Not strictly alternating, so that the answers form no pattern.
	var qs []Question
	for _, illegalFirst := range []bool{true, false, false, true, false, true, true, false} {
		from := &legal
		if illegalFirst {
			from = &illegal
		}
		if len(*from) == 0 {
			continue
		}
		q := (*from)[0]
		*from = (*from)[1:]
		q.N = len(qs) + 1
		qs = append(qs, q)
	}
	return qs
}

// cutQuestion cuts a few lock operations out of ops: with atOverlap from
// the start of the first overlap's earlier hold, otherwise from the first
// hold that begins after the scenario's crux. It keys the cut with
// the lock checker, and gives it up when it is too short or too long, or
// the checker cannot say.
func cutQuestion(ops []history.Op, atOverlap bool) (Question, bool) {
	var lockOps []history.Op
	for _, op := range ops {
		if op.Nested {
			return Question{}, false // a reentrant history: too subtle for a quiz
		}
		if !op.Probe && (op.Kind == history.KindAcquire || op.Kind == history.KindRelease || op.Kind == history.KindCrash) {
			lockOps = append(lockOps, op)
		}
	}
	slices.SortStableFunc(lockOps, func(a, b history.Op) int { return cmp.Compare(a.Call, b.Call) })
	start := startOf(ops, lockOps, atOverlap)
	if start < 0 {
		return Question{}, false
	}
	if !atOverlap {
		return keyed(ops, lockOps[start:])
	}
	// A few operations before the overlap's first hold, so that the
	// violation is not where the history starts; the key decides.
	for back := min(start, 3); back > 0; back-- {
		if q, ok := keyed(ops, lockOps[start-back:]); ok && !q.Legal {
			return q, true
		}
	}
	return keyed(ops, lockOps[start:])
}

// keyed cuts the operations from lockOps[0] on (takeOps), adds the faults
// of ops within them, and keys the cut with the lock checker.
func keyed(ops, lockOps []history.Op) (Question, bool) {
	cut := takeOps(lockOps)
	clients := map[int]bool{}
	for _, op := range cut {
		clients[op.Client] = true
	}
	// One client alone cannot overlap anyone: nothing to judge.
	if len(cut) < minOps || len(cut) > maxOps || len(clients) < 2 {
		return Question{}, false
	}
	cut = withFaults(ops, cut)
	slices.SortStableFunc(cut, func(a, b history.Op) int { return cmp.Compare(a.Call, b.Call) })
	rebase(cut)
	lock := checker.Run(cut, checker.Options{Timeout: 10 * time.Second}).Checks[0]
	if lock.Verdict != checker.OK && lock.Verdict != checker.Illegal {
		return Question{}, false
	}
	q := Question{Ops: cut, Legal: lock.Verdict == checker.OK, Drawing: template.HTML(timeline.Draw(cut, nil))}
	if !q.Legal {
		q.Earlier, q.Later, _ = checker.FirstOverlap(cut)
	}
	return q, true
}

// startOf is the index in lockOps of the acquire a cut starts at.
func startOf(ops, lockOps []history.Op, atOverlap bool) int {
	from := time.Duration(0)
	if atOverlap {
		a, _, ok := checker.FirstOverlap(ops)
		if !ok {
			return -1
		}
		return slices.IndexFunc(lockOps, func(op history.Op) bool {
			return op.Kind == history.KindAcquire && op.Client == a.Client && op.Return == a.Start
		})
	}
	for _, op := range ops {
		if op.Crux {
			from = op.Call
			break
		}
	}
	return slices.IndexFunc(lockOps, func(op history.Op) bool {
		return op.Kind == history.KindAcquire && op.Outcome == models.OK && op.Call >= from
	})
}

// takeOps takes operations from the start of ops until maxOps, or until
// at least minOps are taken and nobody holds the lock; it keeps two
// refused acquires at most, and leaves out a release whose acquire came
// before the cut.
func takeOps(ops []history.Op) []history.Op {
	var cut []history.Op
	held := map[int]int{}
	refused := 0
	for _, op := range ops {
		switch {
		case op.Kind == history.KindAcquire && op.Outcome != models.OK:
			if refused++; refused > 2 {
				continue
			}
		case op.Kind == history.KindAcquire:
			held[op.Client]++
		case op.Kind == history.KindRelease:
			if held[op.Client] == 0 {
				continue
			}
			held[op.Client]--
		case op.Kind == history.KindCrash:
			held[op.Client] = 0
		}
		cut = append(cut, op)
		if len(cut) >= maxOps {
			break
		}
		if len(cut) >= minOps && total(held) == 0 {
			break
		}
	}
	return cut
}

func total(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// withFaults adds to cut the client faults of ops (a pause, slow work)
// that began within it, which the drawing shows and the checker ignores.
func withFaults(ops, cut []history.Op) []history.Op {
	from, to := cut[0].Call, cut[len(cut)-1].Call
	for _, op := range ops {
		if op.Kind == history.KindFault && !op.Probe && op.Client >= 0 && op.Call >= from && op.Call <= to {
			cut = append(cut, op)
		}
	}
	return cut
}

// rebase makes the cut start a little after 0.
func rebase(cut []history.Op) {
	shift := cut[0].Call - 2*time.Millisecond
	for i := range cut {
		cut[i].Call -= shift
		if cut[i].Return != history.NeverReturned {
			cut[i].Return -= shift
		}
		// The cut ends at its last operation's return: later ones are not in it.
	}
}

func msText(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

// WriteQuizText prints qs as text: each history's operations in the order
// they were called, and with answers the key after them all.
func WriteQuizText(w io.Writer, qs []Question, answers bool) error {
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "History %d: legal or illegal? If illegal, which two holds overlap?\n", q.N)
		for _, op := range q.Ops {
			fmt.Fprintf(&b, "  %s\n", opText(op))
		}
		b.WriteString("\n")
	}
	if answers {
		b.WriteString("Answer key (the lock checker's verdict on each history as shown):\n")
		for _, q := range qs {
			fmt.Fprintf(&b, "  %d. %s (cut from %s)\n", q.N, q.Answer(), q.From)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// opText is one operation in one line: who, what, when, and its outcome.
func opText(op history.Op) string {
	ret := "never returned"
	if op.Return != history.NeverReturned {
		ret = "returned " + msText(op.Return)
	}
	switch op.Kind {
	case history.KindFault:
		return fmt.Sprintf("client %d  %-8s from %s, %s (%s)", op.Client, "fault", msText(op.Call), strings.TrimPrefix(ret, "returned "), op.Fault)
	case history.KindCrash:
		return fmt.Sprintf("client %d  %-8s at %s", op.Client, "crash", msText(op.Call))
	}
	out := string(op.Outcome)
	if op.Kind == history.KindAcquire && op.Outcome == models.Failed {
		out = "refused"
	}
	return fmt.Sprintf("client %d  %-8s called %s, %s: %s", op.Client, op.Kind, msText(op.Call), ret, out)
}

var quizBody = template.Must(template.New("quiz").Funcs(template.FuncMap{"optext": opText}).Parse(`
<p>Each history below is a few lock operations cut from a real run (times from the cut's start). A hold runs from the reply of an acquire that succeeded to the call of its release; refused acquires are ticks. For each one: is it <b>legal</b> (at most one client believed it held the lock at any moment) or <b>illegal</b>? If illegal, name the two holds that overlap.</p>
{{range .}}<section class="sheet"><h2>History {{.N}}</h2><figure>{{.Drawing}}</figure>
<pre>{{range .Ops}}{{optext .}}
{{end}}</pre>
<p>Legal ☐ &nbsp; Illegal ☐ &nbsp; overlapping holds: ______________________</p></section>
{{end}}
`))

// writeQuiz writes the quiz of runs as a page and as text into the class
// folder; the key goes to the teacher only.
func writeQuiz(class string, runs []reports.Run) ([]Question, error) {
	qs := Quiz(runs)
	body, err := render(quizBody, qs)
	if err != nil {
		return nil, err
	}
	return qs, writePage(filepath.Join(class, "quiz.html"), "Judge the history", []link{{"workshop", "index.html"}}, body)
}
