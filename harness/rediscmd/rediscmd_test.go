package rediscmd

import (
	"errors"
	"testing"
)

// TestTookBy: a command whose meaning is known says by itself, from its
// words and reply, whether it took the key; any other needs the key's state.
func TestTookBy(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		reply       any
		err         error
		took, known bool
	}{
		{"SET NX took it", []string{"set", "lock", "t", "px", "100", "nx"}, "OK", nil, true, true},
		{"SET NX refused", []string{"set", "lock", "t", "px", "100", "nx"}, nil, nil, false, true},
		{"SET NX GET took it: nil", []string{"SET", "lock", "t", "NX", "GET", "PX", "100"}, nil, nil, true, true},
		{"SET NX GET refused: the old value", []string{"SET", "lock", "t", "NX", "GET"}, "c1-1", nil, false, true},
		{"SET XX GET wrote over a value", []string{"SET", "lock", "t", "XX", "GET"}, "c1-1", nil, true, true},
		{"SET XX GET found nothing", []string{"SET", "lock", "t", "XX", "GET"}, nil, nil, false, true},
		{"plain SET", []string{"SET", "lock", "t"}, "OK", nil, true, true},
		{"SET failed", []string{"SET", "lock", "t", "NX"}, nil, errors.New("READONLY"), false, true},
		{"SETNX took it", []string{"SETNX", "lock", "t"}, true, nil, true, true},
		{"SETNX refused", []string{"SETNX", "lock", "t"}, int64(0), nil, false, true},
		{"GETSET writes", []string{"GETSET", "lock", "t"}, "old", nil, true, true},
		{"PEXPIRE only renews", []string{"PEXPIRE", "lock", "100"}, int64(1), nil, false, true},
		{"GET reads", []string{"GET", "lock"}, "t", nil, false, true},
		{"another key", []string{"SET", "other", "t"}, "OK", nil, false, true},
		{"script: its state tells", []string{"EVALSHA", "abc", "1", "lock", "t"}, int64(1), nil, false, false},
		{"HINCRBY: its state tells", []string{"HINCRBY", "lock", "c0", "1"}, int64(1), nil, false, false},
		{"script on another key", []string{"EVAL", "src", "1", "other", "lock"}, int64(1), nil, false, true},
	}
	for _, tt := range tests {
		took, known := TookBy(tt.args, tt.reply, tt.err, "lock")
		if took != tt.took || known != tt.known {
			t.Errorf("%s: TookBy = %v, %v; want %v, %v", tt.name, took, known, tt.took, tt.known)
		}
	}
}

func TestWords(t *testing.T) {
	for args, want := range map[*[]string]string{
		{"set", "lock", "tok", "px", "100", "nx"}: "SET PX NX",
		{"SET", "lock", "tok"}:                    "SET",
		{"evalsha", "abc", "1", "lock", "tok"}:    "EVALSHA",
		{"pexpire", "lock", "100"}:                "PEXPIRE",
	} {
		if got := Words(*args); got != want {
			t.Errorf("Words(%q) = %q, want %q", *args, got, want)
		}
	}
}
