package harness

import (
	"slices"
	"testing"
	"time"
)

func TestFailpointsFireOnTheirHits(t *testing.T) {
	fps := newFailpoints([]Failpoint{
		{Name: "a", Client: 1, Skip: 1, Times: 2, Action: Sleep(time.Millisecond)},
		{Name: "b", Client: AnyClient, Action: Crash()},
		{Name: "c", Client: 0, Action: Sleep(time.Millisecond)},
		{Name: "c", Client: 0, Action: Pause(time.Millisecond)},
	})
	var fired []bool
	for range 5 {
		fired = append(fired, len(fps.hit("a", 1)) == 1)
	}
	if want := []bool{false, true, true, false, false}; !slices.Equal(fired, want) {
		t.Errorf("client 1 at a fired %v, want %v", fired, want)
	}
	if a := fps.hit("a", 0); len(a) != 0 {
		t.Error("a fired for client 0, armed for client 1 only")
	}
	if a := fps.hit("b", 3); len(a) != 1 || a[0].Kind != ActionCrash {
		t.Errorf("b for any client: got %v", a)
	}
	if a := fps.hit("b", 2); len(a) != 0 {
		t.Error("b fired twice; Times 0 means once")
	}
	if a := fps.hit("c", 0); len(a) != 2 || a[0].Kind != ActionSleep || a[1].Kind != ActionPause {
		t.Errorf("two failpoints at c: got %v, want sleep then pause", a)
	}
	if a := fps.hit("unarmed", 0); len(a) != 0 {
		t.Error("an unarmed failpoint fired")
	}
}
