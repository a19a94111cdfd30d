package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/explore/merge"
)

// mergeUsage prints how to call check merge.
func mergeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: check merge [-out DIR] [-json] DIR...

Builds one report from the shards of an exploration (check explore -shard
I/N with the same lock, topology and seed): their runs counted together,
and one list of distinct bugs, a bug found by several shards listed once.
Each DIR is a shard's folder (-out/shard-I) or a folder of them. The merged
report, its list of runs and each bug's run folder go to -out.

flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, `
Exit codes: 0 no bug, 1 a bug was found or a shard is missing, 2 bad input.
`)
}

// runMerge is `check merge`: the summary (or the JSON report) on stdout.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "locklab-report", "folder the merged report goes into")
	asJSON := fs.Bool("json", false, "print the merged report as one JSON object instead of the summary")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			mergeUsage(stdout, fs)
			return exitOK
		}
		fmt.Fprintln(stderr, "check merge:", err)
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "check merge: name the shards' folders (see check merge -h)")
		return exitUsage
	}
	shards, runs, err := readShards(fs.Args())
	if err == nil {
		err = prepareOut(*out)
	}
	if err != nil {
		fmt.Fprintln(stderr, "check merge:", err)
		return exitUsage
	}
	rep, merged, missing, err := merge.Shards(shards, runs)
	if err != nil {
		fmt.Fprintln(stderr, "check merge:", err)
		return exitUsage
	}
	unlock, err := lockOut(*out)
	if err != nil {
		fmt.Fprintln(stderr, "check merge:", err)
		return exitUsage
	}
	defer unlock()
	if err := writeMerged(*out, rep, merged); err != nil {
		fmt.Fprintln(stderr, "check merge:", err)
		return exitMismatch
	}
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		exploreSummary(stdout, rep, explore.Config{})
		fmt.Fprintf(stdout, "merged %d shards into %s\n", rep.Shards, filepath.Join(*out, explore.ReportFileName(rep.Lock, rep.Topology)))
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "check merge: missing shards %s of %d: the report covers only the others\n", joinInts(missing), rep.Shards+len(missing))
		return exitMismatch
	}
	if rep.Own > 0 {
		return exitMismatch
	}
	return exitOK
}

// readShards reads the shard reports in dirs, each a shard's folder or a
// folder of shard folders, with their runs. A bug's folder is taken to be
// next to its report, wherever the shard wrote it from (a pod's /out).
func readShards(dirs []string) ([]*explore.Report, []explore.RunRecord, error) {
	var reps []*explore.Report
	var runs []explore.RunRecord
	for _, dir := range dirs {
		files, err := reportFiles(dir)
		if err != nil {
			return nil, nil, err
		}
		for _, file := range files {
			rep, err := merge.ReadReport(file)
			if err != nil {
				return nil, nil, err
			}
			if rep.Shard == "" {
				continue // a whole exploration, or a merged one
			}
			at := filepath.Dir(file)
			for i := range rep.Bugs {
				rep.Bugs[i].ReportDir = filepath.Join(at, filepath.Base(rep.Bugs[i].ReportDir))
			}
			rs, err := merge.ReadRuns(filepath.Join(at, explore.RunsFileName(rep.Lock, rep.Topology)))
			if err != nil {
				return nil, nil, err
			}
			reps, runs = append(reps, rep), append(runs, rs...)
		}
	}
	if len(reps) == 0 {
		return nil, nil, fmt.Errorf("no shard's report in %s (check explore -shard writes -out/shard-I)", strings.Join(dirs, ", "))
	}
	return reps, runs, nil
}

// reportFiles is the exploration reports in dir and in its folders.
func reportFiles(dir string) ([]string, error) {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	pattern := "explore-*-report.json"
	here, _ := filepath.Glob(filepath.Join(dir, pattern))
	below, _ := filepath.Glob(filepath.Join(dir, "*", pattern))
	return append(here, below...), nil
}

// writeMerged writes the merged report and its runs into out, with a copy
// of each bug's run folder, numbered as the merged report numbers them.
func writeMerged(out string, rep *explore.Report, runs []explore.RunRecord) error {
	for i := range rep.Bugs {
		b := &rep.Bugs[i]
		dir := filepath.Join(out, explore.FolderName(rep.Lock, rep.Topology, i+1))
		// Replacing what an earlier merge left there.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.CopyFS(dir, os.DirFS(b.ReportDir)); err != nil {
			return err
		}
		b.ReportDir = dir
	}
	if len(rep.Bugs) > 0 {
		rep.ReportDir = rep.Bugs[0].ReportDir
	}
	var lines bytes.Buffer
	if err := explore.WriteRuns(&lines, runs...); err != nil {
		return err
	}
	rep.RunsFile = filepath.Join(out, explore.RunsFileName(rep.Lock, rep.Topology))
	if err := os.WriteFile(rep.RunsFile, lines.Bytes(), 0o644); err != nil {
		return err
	}
	return explore.WriteReport(out, rep)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
