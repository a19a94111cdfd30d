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
	v, err := reports.Verify(dir)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if err := reports.WriteTable(stdout, v.Runs); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	for _, err := range v.Unread {
		fmt.Fprintf(stderr, "check: %v; its recorded verdicts stand unchecked\n", err)
	}
	if len(v.Changes) == 0 && len(v.Unread) == 0 {
		fmt.Fprintf(stdout, "verify: every verdict as recorded\n")
	}
	for _, c := range v.Changes {
		fmt.Fprintf(stdout, "verify: changed: %s\n", c)
	}
	return v.Code()
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
given when the run was made, if the verdict is the same. A run whose history
cannot be read is named on stderr and keeps its recorded verdicts, unchecked;
the others are re-checked.

Exit codes (Jepsen's): 0 every verdict ok, 1 a violation (illegal, stuck or
slow), 2 a verdict unknown or a history unread, or bad input (no such folder,
no run in it, no history in a format this check reads).
`
