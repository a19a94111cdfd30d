package harness

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestFailpointsFireOnTheirHits(t *testing.T) {
	fps := NewFailpoints([]Failpoint{
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
		t.Errorf("two Failpoints at c: got %v, want sleep then pause", a)
	}
	if a := fps.hit("unarmed", 0); len(a) != 0 {
		t.Error("an unarmed failpoint fired")
	}
}

func TestAwaitOtherClientAtFailpoint(t *testing.T) {
	fps := NewFailpoints(nil)
	done := make(chan bool)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- fps.awaitOther(ctx, "x", 0)
	}()
	// Our own hits and other failpoints never end the wait; client 1 at x
	// does, once the waiter has taken its count (hence the loop).
	for ok := false; !ok; {
		fps.hit("x", 0)
		fps.hit("y", 1)
		select {
		case ok = <-done:
			if !ok {
				t.Fatal("awaitOther gave up")
			}
		case <-time.After(time.Millisecond):
			fps.hit("x", 1)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	fps.hit("x", 0)
	if fps.awaitOther(ctx, "x", 0) {
		t.Error("awaitOther returned true with no new hit by another client")
	}
}
