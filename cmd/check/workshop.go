package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/workshop"
)

// runWorkshop is `check workshop`: the workshop folder written from the
// runs of a report folder, or with -quiz its histories as text.
func runWorkshop(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check workshop", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "locklab-report", "the report folder of a `check` run (every pitfall) to cut the workshop from")
	out := fs.String("out", "locklab-workshop", "the folder to write: class/ to hand out, teacher/ to keep")
	quiz := fs.Bool("quiz", false, "print the judge-the-history quiz as text instead of writing the folder")
	answers := fs.Bool("answers", false, "with -quiz: print the answer key after the histories")
	source := fs.String("source", "", "the locklab source tree the Go exercises build against (default: the one check runs in, if any)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "usage: check workshop [-from DIR] [-out DIR] [-source DIR] | check workshop -quiz [-answers] [-from DIR]")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintln(stderr, "check workshop:", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "check workshop: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if info, err := os.Stat(*from); err != nil || !info.IsDir() {
		fmt.Fprintf(stderr, "check workshop: -from %s is not a report folder (run `check -out %s` first)\n", *from, *from)
		return exitUsage
	}
	if *quiz {
		runs, err := reports.LoadRuns(*from)
		if err != nil && len(runs) == 0 {
			fmt.Fprintln(stderr, "check workshop:", err)
			return exitUsage
		}
		if err := workshop.WriteQuizText(stdout, workshop.Quiz(runs), *answers); err != nil {
			fmt.Fprintln(stderr, "check workshop:", err)
			return exitMismatch
		}
		return exitOK
	}
	if *source == "" {
		*source = moduleRoot()
	}
	w, err := workshop.Write(workshop.Options{From: *from, Out: *out, Source: *source})
	if err != nil {
		fmt.Fprintln(stderr, "check workshop:", err)
		return exitMismatch
	}
	fmt.Fprintf(stdout, "workshop: %s (hand out), %s (keep): %d pitfalls, %d histories to judge\n",
		filepath.Join(*out, workshop.ClassDir), filepath.Join(*out, workshop.TeacherDir), len(w.Predict), len(w.Quiz))
	if len(w.Missing) > 0 {
		fmt.Fprintf(stderr, "check workshop: warning: %s has no broken run of %s; their pages have no drawing\n", *from, strings.Join(w.Missing, ", "))
	}
	if *source == "" {
		fmt.Fprintln(stderr, "check workshop: warning: no locklab source tree (-source), so no Go exercises")
	}
	return exitOK
}

// moduleRoot is the locklab source tree the working folder is in, or "".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/locklab/locklab\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
