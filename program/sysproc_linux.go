package program

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts the program in a process group of its own, so that a
// crash or a pause reaches everything it started, and has the kernel kill
// it if locklab dies (Ctrl-C of a test binary, SIGKILL), so that no program
// outlives a run. Pdeathsig fires when the OS thread that started the
// child ends; Go ends a thread only when a goroutine exits locked to it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupMembers lists the processes of process group pgid, read from
// /proc; ok is false when /proc cannot be read.
func groupMembers(pgid int) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, group, found := procStat(pid); found && group == pgid {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// running reports whether process pid still runs: it is neither gone nor
// a zombie. A zombie has ended: its memory, threads and files are
// released, and only its entry waits for its parent to reap it; a
// program's processes that outlive its shell are init's to reap, which
// some inits do only every second or two.
func running(pid int) bool {
	state, _, found := procStat(pid)
	return found && state != 'Z' && state != 'X'
}

// procStat reads the state and process group of process pid from
// /proc/PID/stat; found is false when it is gone.
func procStat(pid int) (state byte, pgid int, found bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "PID (COMM) STATE PPID PGRP …", where COMM may hold spaces and
	// parentheses: the fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgid, err = strconv.Atoi(fields[2])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgid, true
}
