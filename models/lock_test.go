package models_test

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/locklab/locklab/models"
)

// historyEnd is the Return of an operation whose outcome is unknown: the
// recorder keeps such an operation open until the end of the run.
const historyEnd = 1000

func lockOp(op models.LockOp, client int, key string, call, ret int64, o models.Outcome) porcupine.Operation {
	return porcupine.Operation{
		ClientId: client,
		Input:    models.LockInput{Op: op, Client: client, Key: key},
		Call:     call,
		Output:   models.LockOutput{Outcome: o},
		Return:   ret,
	}
}

func acquire(client int, key string, call, ret int64, o models.Outcome) porcupine.Operation {
	return lockOp(models.Acquire, client, key, call, ret, o)
}

func release(client int, key string, call, ret int64, o models.Outcome) porcupine.Operation {
	return lockOp(models.Release, client, key, call, ret, o)
}

func crash(client int, at int64) porcupine.Operation {
	return lockOp(models.Crash, client, "", at, at, models.OK)
}

func TestLockModel(t *testing.T) {
	const ok, fail, unknown = models.OK, models.Failed, models.Unknown
	tests := []struct {
		name    string
		history []porcupine.Operation
		legal   bool
	}{
		{"empty history", nil, true},
		{"sequential holds by different clients", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			release(1, "a", 2, 3, ok),
			acquire(2, "a", 4, 5, ok),
			release(2, "a", 6, 7, ok),
		}, true},
		{"overlapping holds", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(2, "a", 2, 3, ok),
			release(1, "a", 4, 5, ok),
			release(2, "a", 6, 7, ok),
		}, false},
		{"reentrant hold released as often as taken", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(1, "a", 2, 3, ok),
			release(1, "a", 4, 5, ok),
			release(1, "a", 6, 7, ok),
			acquire(2, "a", 8, 9, ok),
		}, true},
		{"reentrant hold released once", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(1, "a", 2, 3, ok),
			release(1, "a", 4, 5, ok),
			acquire(2, "a", 6, 7, ok),
		}, false},
		{"crash then takeover", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			crash(1, 2),
			acquire(2, "a", 3, 4, ok),
		}, true},
		{"crash of a non-holder does not free the holder", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			crash(3, 2),
			acquire(2, "a", 3, 4, ok),
		}, false},
		{"crash ends holds on every key", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(1, "b", 2, 3, ok),
			crash(1, 4),
			acquire(2, "a", 5, 6, ok),
			acquire(3, "b", 7, 8, ok),
		}, true},
		{"only crashes", []porcupine.Operation{
			crash(1, 0),
			crash(2, 1),
		}, true},
		{"failed acquire during a hold", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(2, "a", 2, 3, fail),
			release(1, "a", 4, 5, ok),
		}, true},
		{"unknown acquire does not block others", []porcupine.Operation{
			acquire(1, "a", 0, historyEnd, unknown),
			acquire(2, "a", 1, 2, ok),
			release(2, "a", 3, 4, ok),
			acquire(3, "a", 5, 6, ok),
		}, true},
		{"unknown release ends the hold", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			release(1, "a", 2, historyEnd, unknown),
			acquire(2, "a", 5, 6, ok),
		}, true},
		{"failed release ends the hold", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			release(1, "a", 2, 3, fail),
			acquire(2, "a", 4, 5, ok),
		}, true},
		{"release by a non-holder does not free the holder", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			release(2, "a", 2, 3, ok),
			acquire(3, "a", 4, 5, ok),
		}, false},
		{"two keys held by two clients at once", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(2, "b", 2, 3, ok),
			release(1, "a", 4, 5, ok),
			release(2, "b", 6, 7, ok),
		}, true},
		{"one of two keys held by two clients at once", []porcupine.Operation{
			acquire(1, "a", 0, 1, ok),
			acquire(2, "b", 2, 3, ok),
			acquire(3, "a", 4, 5, ok),
		}, false},
		{"concurrent acquires, one won first and released", []porcupine.Operation{
			acquire(1, "a", 0, 10, ok),
			acquire(2, "a", 5, 40, ok),
			release(1, "a", 15, 20, ok),
			release(2, "a", 45, 50, ok),
		}, true},
		{"concurrent acquires, both won before any release", []porcupine.Operation{
			acquire(1, "a", 0, 10, ok),
			acquire(2, "a", 0, 10, ok),
			release(1, "a", 15, 20, ok),
			release(2, "a", 15, 20, ok),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(models.LockModel(), tt.history); got != tt.legal {
				t.Errorf("CheckOperations = %v, want %v", got, tt.legal)
			}
		})
	}
}

func TestLockPartition(t *testing.T) {
	partition := models.LockModel().Partition
	mixed := []porcupine.Operation{
		acquire(1, "a", 0, 1, models.OK),
		acquire(2, "b", 2, 3, models.OK),
		crash(1, 4),
		release(2, "b", 5, 6, models.OK),
	}
	parts := partition(mixed)
	if len(parts) != 2 || len(parts[0]) != 2 || len(parts[1]) != 3 {
		t.Errorf("partition sizes: got %v, want [[a, crash] [b, crash, b]]", parts)
	}
	for i, part := range parts {
		if !hasCrash(part) {
			t.Errorf("partition %d has no crash: %v", i, part)
		}
	}

	crashes := []porcupine.Operation{crash(1, 0), crash(2, 1)}
	if parts := partition(crashes); len(parts) != 1 || len(parts[0]) != 2 {
		t.Errorf("only crashes: got %v, want one partition of 2", parts)
	}
}

func hasCrash(ops []porcupine.Operation) bool {
	for _, op := range ops {
		if op.Input.(models.LockInput).Op == models.Crash {
			return true
		}
	}
	return false
}

func TestLockDescribe(t *testing.T) {
	m := models.LockModel()
	ops := []struct {
		op   porcupine.Operation
		want string
	}{
		{acquire(2, "lock", 0, 1, models.OK), "c2 acquire(lock) → ok"},
		{acquire(2, "lock", 0, 1, models.Failed), "c2 acquire(lock) → fail"},
		{release(1, "lock", 0, 1, models.Unknown), "c1 release(lock) → unknown"},
		{crash(3, 0), "c3 crash"},
	}
	for _, tt := range ops {
		if got := m.DescribeOperation(tt.op.Input, tt.op.Output); got != tt.want {
			t.Errorf("DescribeOperation = %q, want %q", got, tt.want)
		}
	}
	states := []struct {
		state models.LockState
		want  string
	}{
		{models.LockState{Holder: -1}, "free"},
		{models.LockState{Holder: 2, Count: 1}, "held by c2 ×1"},
	}
	for _, tt := range states {
		if got := m.DescribeState(tt.state); got != tt.want {
			t.Errorf("DescribeState(%+v) = %q, want %q", tt.state, got, tt.want)
		}
	}
}

// contendedHistory returns a legal history of n operations spread over keys
// keys. On each key 8 clients take turns: the next holder's acquire overlaps
// the previous holder's release, and another client's acquire fails during
// each hold. Every client has at most one operation under way at a time.
func contendedHistory(n, keys int) []porcupine.Operation {
	const clientsPerKey = 8
	perKey := n / keys
	var history []porcupine.Operation
	for k := range keys {
		key := fmt.Sprintf("key%d", k)
		client := func(i int) int { return k*clientsPerKey + i%clientsPerKey }
		var ops []porcupine.Operation
		for round := 0; len(ops) < perKey; round++ {
			t := int64(round*10 + k) // keys start staggered so their operations interleave
			holder, loser := client(round), client(round+3)
			ops = append(ops,
				acquire(holder, key, t, t+3, models.OK),
				acquire(loser, key, t+4, t+6, models.Failed),
				release(holder, key, t+8, t+11, models.OK),
			)
		}
		history = append(history, ops[:perKey]...)
	}
	return history
}

// TestContendedHistory makes sure the benchmark checks a history that is
// legal, and one that a single overlapping hold would make illegal.
func TestContendedHistory(t *testing.T) {
	history := contendedHistory(3000, 4)
	if !porcupine.CheckOperations(models.LockModel(), history) {
		t.Fatal("contended history is illegal")
	}
	history[1].Output = models.LockOutput{Outcome: models.OK} // a failed acquire now wins during a hold
	if porcupine.CheckOperations(models.LockModel(), history) {
		t.Fatal("contended history with an overlapping hold is legal")
	}
}

func BenchmarkLockModel100k(b *testing.B) {
	history := contendedHistory(100_000, 16)
	model := models.LockModel()
	for b.Loop() {
		if !porcupine.CheckOperations(model, history) {
			b.Fatal("legal history reported illegal")
		}
	}
}
