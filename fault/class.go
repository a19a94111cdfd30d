package fault

import "slices"

// Class is a class of faults: what several kinds do alike to a lock, in
// the few words of one column of the comparison ("which lock should we
// use?"). Every kind with a Family has one, so that a lock's run under any
// fault says which column it bears on; a kind that only sets the stage for
// another has none.
type Class string

// Classes of kinds, the comparison's columns.
const (
	ClassPause     Class = "paused"     // the holder stops (or works on) past its lease
	ClassCutOff    Class = "cut-off"    // the holder loses its link or connection to the lock
	ClassFailover  Class = "failover"   // a lock node forgets the lock: killed and restarted, failed over, evicted
	ClassClockJump Class = "clock-jump" // a clock jumps: a lock node's or the holder's
	ClassLostReply Class = "lost-reply" // a reply to the lock's command is lost or comes late: a slow network, a paused node
	ClassPool      Class = "small-pool" // the requests of one service share a pool smaller than its waiters
)

// class is a class with how the comparison heads its column.
type class struct {
	class Class
	title string
}

// classList is every class in the comparison's order, with its heading:
// the one place a class is named.
func classList() []class {
	return []class{
		{ClassPause, "holder paused past its lease"},
		{ClassCutOff, "holder cut off"},
		{ClassFailover, "lock node killed / failover"},
		{ClassClockJump, "clock jump"},
		{ClassLostReply, "lost reply"},
		{ClassPool, "waiters on a small pool"},
	}
}

// Classes lists every class, in the order of the comparison's columns.
func Classes() []Class {
	var cs []Class
	for _, c := range classList() {
		cs = append(cs, c.class)
	}
	return cs
}

// Title is how the comparison heads c's column, or "" for a class not in
// Classes.
func (c Class) Title() string {
	list := classList()
	if i := slices.IndexFunc(list, func(x class) bool { return x.class == c }); i >= 0 {
		return list[i].title
	}
	return ""
}
