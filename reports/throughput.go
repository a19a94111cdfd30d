package reports

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/checker"
)

// throughputChart is a small bar chart of critical sections per second
// before, during and after the faults; a run without faults has one bar.
func throughputChart(st checker.Stats) []byte {
	type bar struct {
		name string
		p    checker.Span
	}
	bars := []bar{{"before faults", st.Before}, {"during faults", st.During}, {"after faults", st.After}}
	if st.During.To-st.During.From <= 0 && st.After.To-st.After.From <= 0 {
		bars = []bar{{"whole run (no fault)", st.Before}}
	}
	// A stretch of no length, such as the "during" of a crash, says nothing.
	bars = slices.DeleteFunc(bars, func(b bar) bool { return b.p.To-b.p.From <= 0 })
	top := 0.0
	for _, b := range bars {
		top = max(top, b.p.PerSec)
	}
	const w, labelW, barMax, rowH = 560.0, 130.0, 220.0, 22.0
	h := rowH*float64(len(bars)) + 6
	var out bytes.Buffer
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" class="throughput" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" font-family="system-ui, sans-serif" font-size="12" role="img" aria-label="critical sections per second">`, w, h, w, h)
	for i, b := range bars {
		y := float64(i)*rowH + 3
		length := 0.0
		if top > 0 {
			length = b.p.PerSec / top * barMax
		}
		sections := fmt.Sprintf("%d sections", b.p.Sections)
		if b.p.Sections == 1 {
			sections = "1 section"
		}
		fmt.Fprintf(&out, `<text x="0" y="%.0f">%s</text><rect x="%.0f" y="%.0f" width="%.1f" height="%.0f" fill="#4a7bd0"/>`, y+13, b.name, labelW, y, max(length, 1), rowH-6)
		fmt.Fprintf(&out, `<text x="%.0f" y="%.0f">%.1f/s: %s, %s–%s</text>`, labelW+length+6, y+13, b.p.PerSec, sections, ms(b.p.From), ms(b.p.To))
	}
	out.WriteString("</svg>\n")
	return out.Bytes()
}

// ms prints a time in whole milliseconds, as the timeline does.
func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
