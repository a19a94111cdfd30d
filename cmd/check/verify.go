package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/reports"
)

// runVerify is `check verify DIR`: every checker again on the histories
// saved in DIR (one run's folder, or a report folder), with nothing
// started. It rewrites result.json and the pages, prints the table, and
// exits as Jepsen does: 0 when every verdict is ok, 1 on a violation, 2
// when a verdict is unknown (and for bad input).
func runVerify(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, verifyUsage)
		return exitOK
	}
	if len(args) != 1 || args[0] == "" {
		fmt.Fprintf(stderr, "check: verify takes one folder, a run's or a report's (check verify DIR), got %q\n", args)
		return exitUsage
	}
	dir := args[0]
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		fmt.Fprintf(stderr, "check: verify: %s is not a folder\n", dir)
		return exitUsage
	}
	// A check writing this report would race the rewrite.
	unlock, err := lockOut(reportOf(dir))
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	defer unlock()
	runs, changes, err := reports.Verify(dir)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if err := reports.WriteTable(stdout, runs); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if len(changes) == 0 {
		fmt.Fprintf(stdout, "verify: every verdict as recorded\n")
	}
	for _, c := range changes {
		fmt.Fprintf(stdout, "verify: changed: %s\n", c)
	}
	return reports.VerifyCode(runs)
}

// reportOf is the report folder a verify of dir rewrites: dir itself, or
// the folder around a run's folder.
func reportOf(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, reports.RunFile)); err == nil {
		return filepath.Dir(dir)
	}
	return dir
}

const verifyUsage = `usage: check verify DIR

Re-runs every checker on the histories saved in DIR, one run's folder or a
whole report folder; nothing is started. It rewrites each run's result.json,
run.json, porcupine pages and run.html, and the report's index.html, then
prints the table. A failing verdict keeps the kind (own or inherent) it was
given when the run was made, if the verdict is the same.

Exit codes (Jepsen's): 0 every verdict ok, 1 a violation (illegal, stuck or
slow), 2 a verdict unknown, or bad input (no such folder, no run in it, a
history in an old or unknown format).
`
