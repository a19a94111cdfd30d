package timeline

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
)

// Sequence is the story of the run's first violation (see Story) drawn as a
// sequence diagram: a lifeline per client, one for the lock and, when the
// stock is part of the story, one for it; one row per step with its time.
// It reports false when the run has no violation to tell.
func Sequence(ops []history.Op, checks []checker.Check) ([]byte, bool) {
	story := Story(ops, checks)
	if len(story) == 0 {
		return nil, false
	}
	return drawSequence(story, lockName(ops)), true
}

// lockName names the lock's lifeline: by the service the lock spoke to, as
// its recorded replies or the servers' events show (etcd's carry a
// revision, ZooKeeper's none); a lock that sent no command (each client's
// own in-process mutex) is just "lock".
func lockName(ops []history.Op) string {
	for _, op := range ops {
		switch {
		case op.Kind == history.KindReply:
			return "lock (Redis)"
		case op.Kind == history.KindServer && op.Server != nil && op.Server.Revision > 0:
			return "lock (etcd)"
		case op.Kind == history.KindServer:
			return "lock (ZK)"
		}
	}
	return "lock"
}

// Sequence diagram geometry, in SVG units.
const (
	seqTimeW = 70
	seqLifeW = 92
	seqRowH  = 26
	seqHeadH = 34
	seqTextW = 560
)

func drawSequence(story []Event, lock string) []byte {
	var clients []int
	stock := false
	for _, e := range story {
		if e.Client >= 0 && !slices.Contains(clients, e.Client) {
			clients = append(clients, e.Client)
		}
		stock = stock || e.Step == StepRead || e.Step == StepWrite
	}
	slices.Sort(clients)
	names := []string{}
	for _, c := range clients {
		names = append(names, fmt.Sprintf("client %d", c))
	}
	lockAt := len(names)
	names = append(names, lock)
	stockAt := -1
	if stock {
		stockAt = len(names)
		names = append(names, "stock")
	}
	lifeX := func(i int) float64 { return seqTimeW + seqLifeW*float64(i) + seqLifeW/2 }
	clientX := func(c int) float64 { return lifeX(slices.Index(clients, c)) }
	textX := seqTimeW + seqLifeW*float64(len(names)) + 10
	longest := 0
	for _, e := range story {
		longest = max(longest, len([]rune(e.Text)))
	}
	w := textX + max(seqTextW, float64(longest)*7.2+10)
	h := float64(seqHeadH + seqRowH*len(story) + 8)

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="sequence" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="system-ui, sans-serif" font-size="12" role="img" aria-label="the first violation, step by step">`, w, h, w, h)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>`)
	for i, n := range names {
		fmt.Fprintf(&b, `<rect x="%.0f" y="4" width="%d" height="20" rx="3" fill="#eef2f8" stroke="#8aa"/><text x="%.0f" y="18" text-anchor="middle" font-weight="bold">%s</text>`,
			lifeX(i)-seqLifeW/2+4, seqLifeW-8, lifeX(i), esc(n))
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="24" y2="%.0f" stroke="#99a" stroke-dasharray="3 3"/>`, lifeX(i), lifeX(i), h-4)
	}
	for i, e := range story {
		y := float64(seqHeadH + seqRowH*i)
		mid := y + seqRowH/2
		class := "step"
		switch {
		case e.Violation:
			class = "step violation"
			fmt.Fprintf(&b, `<rect x="0" y="%.0f" width="%.0f" height="%d" fill="#f8d0d0"/>`, y+1, w, seqRowH-2)
		case e.Lesson:
			class = "step lesson"
			fmt.Fprintf(&b, `<rect x="0" y="%.0f" width="%.0f" height="%d" fill="#d4eed8"/>`, y+1, w, seqRowH-2)
		case e.Cause:
			// The step between the two holds that let the second in.
			class = "step cause"
			fmt.Fprintf(&b, `<rect x="0" y="%.0f" width="%.0f" height="%d" fill="#fbeab8"/>`, y+1, w, seqRowH-2)
		}
		fmt.Fprintf(&b, `<g class="%s">`, class)
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end" fill="#555">%s</text>`, seqTimeW-8, mid+4, msText(e.At))
		target := lockAt
		if e.Step == StepRead || e.Step == StepWrite {
			target = stockAt
		}
		switch e.Step {
		case StepAcquire, StepRefused, StepRelease, StepRead, StepWrite:
			x0, x1 := clientX(e.Client), lifeX(target)
			dash := ""
			if e.Step == StepRefused {
				dash = ` stroke-dasharray="4 3"`
			}
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="#333" stroke-width="1.5" marker-end="url(#arrow)"%s/>`, x0, x1-4, mid, mid, dash)
		case StepPause:
			x0 := clientX(e.Client)
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="24" height="%d" fill="#fde2c4" stroke="#b35900"/><text x="%.0f" y="%.0f" text-anchor="middle" font-size="10" fill="#b35900">zz</text>`,
				x0-12, y+4, seqRowH-8, x0, mid+4)
		case StepCrash:
			x0 := clientX(e.Client)
			fmt.Fprintf(&b, `<g stroke="#c00" stroke-width="2.5"><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f"/></g>`,
				x0-7, mid-7, x0+7, mid+7, x0-7, mid+7, x0+7, mid-7)
		case StepExpire:
			xl := lifeX(lockAt)
			fmt.Fprintf(&b, `<circle cx="%.0f" cy="%.0f" r="8" fill="#fff" stroke="#b30000" stroke-width="2"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#b30000" stroke-width="2"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#b30000" stroke-width="2"/>`,
				xl, mid, xl, mid, xl, mid-5, xl, mid, xl+4, mid)
		case StepFault, StepEnd:
			x0, x1 := lifeX(0)-seqLifeW/2+6, lifeX(len(names)-1)+seqLifeW/2-6
			fill := "#f0a04b"
			if e.Step == StepEnd {
				fill = "#9467bd"
			}
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%d" rx="3" fill="%s" fill-opacity="0.45"/>`, x0, y+5, x1-x0, seqRowH-10, fill)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f"%s>%s</text>`, textX, mid+4, stepFont(e), esc(e.Text))
		b.WriteString("</g>")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func stepFont(e Event) string {
	switch {
	case e.Violation:
		return ` font-weight="bold" fill="#900"`
	case e.Lesson:
		return ` font-weight="bold" fill="#14602a"`
	case e.Cause:
		return ` font-weight="bold" fill="#7a4d00"`
	}
	return ""
}
