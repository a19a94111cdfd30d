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
	})
	var fired []bool
	for range 5 {
		_, ok := fps.hit("a", 1)
		fired = append(fired, ok)
	}
	if want := []bool{false, true, true, false, false}; !slices.Equal(fired, want) {
		t.Errorf("client 1 at a fired %v, want %v", fired, want)
	}
	if _, ok := fps.hit("a", 0); ok {
		t.Error("a fired for client 0, armed for client 1 only")
	}
	if a, ok := fps.hit("b", 3); !ok || a.Kind != ActionCrash {
		t.Errorf("b for any client: got %v %v", a, ok)
	}
	if _, ok := fps.hit("b", 2); ok {
		t.Error("b fired twice; Times 0 means once")
	}
	if _, ok := fps.hit("unarmed", 0); ok {
		t.Error("an unarmed failpoint fired")
	}
}
