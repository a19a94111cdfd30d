package failpoint

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestFailpointsFireOnTheirHits(t *testing.T) {
	fps := NewSet([]Point{
		{Name: "a", Client: 1, Skip: 1, Times: 2, Action: Sleep(time.Millisecond)},
		{Name: "b", Client: AnyClient, Action: Crash()},
		{Name: "c", Client: 0, Action: Sleep(time.Millisecond)},
		{Name: "c", Client: 0, Action: Pause(time.Millisecond)},
	})
	var fired []bool
	for range 5 {
		fired = append(fired, len(fps.Hit("a", 1)) == 1)
	}
	if want := []bool{false, true, true, false, false}; !slices.Equal(fired, want) {
		t.Errorf("client 1 at a fired %v, want %v", fired, want)
	}
	if a := fps.Hit("a", 0); len(a) != 0 {
		t.Error("a fired for client 0, armed for client 1 only")
	}
	if a := fps.Hit("b", 3); len(a) != 1 || a[0].Kind != ActionCrash {
		t.Errorf("b for any client: got %v", a)
	}
	if a := fps.Hit("b", 2); len(a) != 0 {
		t.Error("b fired twice; Times 0 means once")
	}
	if a := fps.Hit("c", 0); len(a) != 2 || a[0].Kind != ActionSleep || a[1].Kind != ActionPause {
		t.Errorf("two Failpoints at c: got %v, want sleep then pause", a)
	}
	if a := fps.Hit("unarmed", 0); len(a) != 0 {
		t.Error("an unarmed failpoint fired")
	}
}

func TestAwaitOtherClientAtFailpoint(t *testing.T) {
	fps := NewSet(nil)
	done := make(chan bool)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- fps.AwaitOther(ctx, "x", 0)
	}()
	// Our own hits and other failpoints never end the wait; client 1 at x
	// does, once the waiter has taken its count (hence the loop).
	for ok := false; !ok; {
		fps.Hit("x", 0)
		fps.Hit("y", 1)
		select {
		case ok = <-done:
			if !ok {
				t.Fatal("awaitOther gave up")
			}
		case <-time.After(time.Millisecond):
			fps.Hit("x", 1)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	fps.Hit("x", 0)
	if fps.AwaitOther(ctx, "x", 0) {
		t.Error("awaitOther returned true with no new hit by another client")
	}
}

// TestInflight: a command is alone on its way only if no other was on
// its way when it started, and none started or ended before it ended.
func TestInflight(t *testing.T) {
	tests := []struct {
		name  string
		steps func(k *Inflight) bool // returns whether command A was alone
	}{
		{"alone", func(k *Inflight) bool {
			g, alone := k.Start(0)
			return k.End(0, g) && alone
		}},
		{"another inside", func(k *Inflight) bool {
			g, alone := k.Start(0)
			gb, _ := k.Start(0)
			k.End(0, gb)
			return k.End(0, g) && alone
		}},
		{"another already on its way", func(k *Inflight) bool {
			k.Start(0)
			g, alone := k.Start(0)
			return k.End(0, g) && alone
		}},
		{"another on another node", func(k *Inflight) bool {
			g, alone := k.Start(0)
			gb, _ := k.Start(1)
			k.End(1, gb)
			return k.End(0, g) && alone
		}},
	}
	want := map[string]bool{"alone": true, "another on another node": true}
	for _, tt := range tests {
		if got := tt.steps(&Inflight{}); got != want[tt.name] {
			t.Errorf("%s: alone = %v, want %v", tt.name, got, want[tt.name])
		}
	}
}
