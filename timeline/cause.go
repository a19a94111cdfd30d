package timeline

import (
	"slices"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/checker/cause"
)

// cause is the step that let b in while a held the lock (cause.Of),
// drawn as the step of its kind, and the hold its client's late release
// ended, when it is a third client's; false when no recorded event
// explains it.
func (s *scene) cause(a, b checker.Hold) (Event, *checker.Hold, bool) {
	c, ok := cause.Of(s.ops, a, b)
	return Event{At: c.At, Client: c.Client, Step: Step(c.Kind), Text: c.Text, Cause: true, priority: 9}, c.Ended, ok
}

// CauseOf is the step of a story that let the second holder in, and false
// when the story names none.
func CauseOf(story []Event) (Event, bool) {
	i := slices.IndexFunc(story, func(e Event) bool { return e.Cause })
	if i < 0 {
		return Event{}, false
	}
	return story[i], true
}
