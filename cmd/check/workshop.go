package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/locks"
	"github.com/locklab/locklab/pitfalls"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/workshop"
)

// runWorkshop is `check workshop`: the workshop folder written from the
// runs of a report folder, or with -quiz its histories as text.
func runWorkshop(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check workshop", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "locklab-report", "the report folder a check run wrote (every pitfall), to cut the workshop from")
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

// gradeAsked reports whether args ask for a grade (-grade), which
// runGrade reads instead of the catalogue's flags.
func gradeAsked(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "grade" {
			return true
		}
	}
	return false
}

// runGrade is `check -lock NAME -grade PITFALL`: the lock graded against
// the pitfall's fix, one line per scenario, exit 1 while one still fails.
func runGrade(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check -grade", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	lock := fs.String("lock", "", "the lock to grade (exec:'COMMAND' for a lock program)")
	pitfall := fs.String("grade", "", "the pitfall whose fix the lock must match: "+strings.Join(workshop.Exercises, ", ")+", or any with a fix")
	seed := fs.Int64("seed", 1, "seed of the clients' retry jitter")
	out := fs.String("out", "locklab-grade", "the folder of the runs and their pages")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "check: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if strings.TrimSpace(*lock) == "" || strings.TrimSpace(*pitfall) == "" {
		fmt.Fprintln(stderr, "check: -grade PITFALL goes with -lock NAME")
		return exitUsage
	}
	l, err := locks.Lookup(*lock)
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if _, err := pitfalls.Lookup(*pitfall); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	if err := prepareOut(*out); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return exitUsage
	}
	grades, err := workshop.GradeLock(ctx, *pitfall, l.Name, l.New, workshop.GradeOptions{Out: *out, Seed: *seed, Progress: stdout})
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		if ctx.Err() != nil {
			return 130
		}
		return exitMismatch
	}
	failed := 0
	for _, g := range grades {
		if !g.Pass() {
			failed++
		}
	}
	fmt.Fprintf(stdout, "grade %s: %d of %d scenarios pass\n", *pitfall, len(grades)-failed, len(grades))
	if failed > 0 {
		return exitMismatch
	}
	return exitOK
}
