package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/explore"
	"github.com/locklab/locklab/explore/merge"
	"gopkg.in/yaml.v2"
)

// The manifests of docker/k8s, relative to this package.
const (
	exploreManifest = "../../docker/k8s/explore-job.yaml"
	mergeManifest   = "../../docker/k8s/merge-job.yaml"
)

// k8sPVC and k8sJob hold every field the manifests use, and no other: they
// are read strictly, so that a misspelt field, which kubectl would refuse
// only against a cluster, fails here.
type k8sPVC struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   k8sMetadata `yaml:"metadata"`
	Spec       struct {
		AccessModes []string     `yaml:"accessModes"`
		Resources   k8sResources `yaml:"resources"`
	} `yaml:"spec"`
}

type k8sMetadata struct {
	Name string `yaml:"name"`
}

type k8sResources struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits"`
}

type k8sJob struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   k8sMetadata `yaml:"metadata"`
	Spec       struct {
		CompletionMode        string `yaml:"completionMode"`
		Completions           *int   `yaml:"completions"`
		Parallelism           *int   `yaml:"parallelism"`
		BackoffLimit          *int   `yaml:"backoffLimit"`
		BackoffLimitPerIndex  *int   `yaml:"backoffLimitPerIndex"`
		ActiveDeadlineSeconds *int   `yaml:"activeDeadlineSeconds"`
		PodFailurePolicy      *struct {
			Rules []struct {
				Action      string `yaml:"action"`
				OnExitCodes *struct {
					ContainerName string `yaml:"containerName"`
					Operator      string `yaml:"operator"`
					Values        []int  `yaml:"values"`
				} `yaml:"onExitCodes"`
				OnPodConditions []struct {
					Type string `yaml:"type"`
				} `yaml:"onPodConditions"`
			} `yaml:"rules"`
		} `yaml:"podFailurePolicy"`
		Template struct {
			Spec k8sPodSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sPodSpec struct {
	RestartPolicy   string `yaml:"restartPolicy"`
	SecurityContext struct {
		RunAsNonRoot bool `yaml:"runAsNonRoot"`
		RunAsUser    int  `yaml:"runAsUser"`
		RunAsGroup   int  `yaml:"runAsGroup"`
		FSGroup      int  `yaml:"fsGroup"`
	} `yaml:"securityContext"`
	Containers []struct {
		Name            string   `yaml:"name"`
		Image           string   `yaml:"image"`
		ImagePullPolicy string   `yaml:"imagePullPolicy"`
		Args            []string `yaml:"args"`
		Env             []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		Resources    k8sResources `yaml:"resources"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	} `yaml:"containers"`
	Volumes []struct {
		Name                  string `yaml:"name"`
		PersistentVolumeClaim struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
	} `yaml:"volumes"`
}

// k8sManifests is what the two manifests hold.
type k8sManifests struct {
	pvc     k8sPVC
	explore k8sJob
	merge   k8sJob
}

// readK8sManifests reads the manifests; each file may hold only the
// objects expected of it, once each.
func readK8sManifests(t *testing.T) k8sManifests {
	t.Helper()
	var m k8sManifests
	seen := map[string]bool{}
	for _, file := range []string{exploreManifest, mergeManifest} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc yaml.MapSlice
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			// Decoded once loosely to learn the object, then again
			// strictly into its type.
			var head struct {
				Kind     string
				Metadata k8sMetadata
			}
			raw, err := yaml.Marshal(doc)
			if err == nil {
				err = yaml.Unmarshal(raw, &head)
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			key := path.Base(file) + ": " + head.Kind + " " + head.Metadata.Name
			if seen[key] {
				t.Fatalf("%s twice", key)
			}
			seen[key] = true
			var into any
			switch key {
			case "explore-job.yaml: PersistentVolumeClaim locklab-out":
				into = &m.pvc
			case "explore-job.yaml: Job locklab-explore":
				into = &m.explore
			case "merge-job.yaml: Job locklab-merge":
				into = &m.merge
			default:
				t.Fatalf("unexpected object %s", key)
			}
			if err := yaml.UnmarshalStrict(raw, into); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
		}
	}
	if len(seen) != 3 {
		t.Fatalf("the manifests hold %d of the 3 objects expected: %v", len(seen), seen)
	}
	return m
}

// mountOf is the path job's only container mounts the claim at, checking
// the volume is the claim.
func mountOf(t *testing.T, job k8sJob, claim string) string {
	t.Helper()
	spec := job.Spec.Template.Spec
	c := spec.Containers[0]
	if len(c.VolumeMounts) != 1 || len(spec.Volumes) != 1 || c.VolumeMounts[0].Name != spec.Volumes[0].Name {
		t.Fatalf("%s: want one volume, mounted once; got mounts %+v, volumes %+v", job.Metadata.Name, c.VolumeMounts, spec.Volumes)
	}
	if got := spec.Volumes[0].PersistentVolumeClaim.ClaimName; got != claim {
		t.Errorf("%s: volume claims %q, want %q", job.Metadata.Name, got, claim)
	}
	return c.VolumeMounts[0].MountPath
}

// checkPod checks what both Jobs' pods need: one container of the image
// no registry serves, and a restart policy that never redoes a shard in
// place.
func checkPod(t *testing.T, job k8sJob) {
	t.Helper()
	spec := job.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: want one container, got %d", job.Metadata.Name, len(spec.Containers))
	}
	c := spec.Containers[0]
	if repo, _, _ := strings.Cut(c.Image, ":"); repo != "locklab/check" {
		t.Errorf("%s: image %q, want locklab/check (docker/build.sh check)", job.Metadata.Name, c.Image)
	}
	if c.ImagePullPolicy != "Never" {
		t.Errorf("%s: imagePullPolicy %q, want Never: the image is loaded into the nodes, no registry has it", job.Metadata.Name, c.ImagePullPolicy)
	}
	if spec.RestartPolicy != "Never" {
		t.Errorf("%s: restartPolicy %q, want Never", job.Metadata.Name, spec.RestartPolicy)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("%s: want cpu and memory requests and a memory limit, got %+v", job.Metadata.Name, c.Resources)
	}
	if _, ok := c.Resources.Limits["cpu"]; ok {
		t.Errorf("%s: a CPU limit throttles a run's servers and clients at once, a pause no fault drew", job.Metadata.Name)
	}
}

// TestK8sManifest checks docker/k8s against the CLI: the explore Job's
// arguments are ones check explore takes, its shards are what the CLI
// reads from the environment, and the merge reads where the shards wrote.
func TestK8sManifest(t *testing.T) {
	m := readK8sManifests(t)
	job := m.explore
	checkPod(t, job)
	checkPod(t, m.merge)
	if job.Spec.CompletionMode != "Indexed" {
		t.Errorf("completionMode %q, want Indexed: each pod's shard is its JOB_COMPLETION_INDEX", job.Spec.CompletionMode)
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil || *job.Spec.Completions < 2 || *job.Spec.Parallelism != *job.Spec.Completions {
		t.Fatalf("want completions = parallelism, at least 2 shards; got %v and %v", job.Spec.Completions, job.Spec.Parallelism)
	}
	shards := *job.Spec.Completions
	if job.Spec.BackoffLimit == nil {
		t.Error("no backoffLimit: Kubernetes' default retries a failing shard six times")
	}

	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if got := env["LOCKLAB_SHARDS"]; got != strconv.Itoa(shards) {
		t.Errorf("LOCKLAB_SHARDS = %q, want %d, the completions", got, shards)
	}
	if _, ok := env["JOB_COMPLETION_INDEX"]; ok {
		t.Error("JOB_COMPLETION_INDEX is set in the manifest: Kubernetes sets it, to each pod's own index")
	}
	if job.Spec.PodFailurePolicy != nil {
		for _, r := range job.Spec.PodFailurePolicy.Rules {
			if r.OnExitCodes != nil && r.OnExitCodes.ContainerName != c.Name {
				t.Errorf("podFailurePolicy rule %s names container %q, not %q", r.Action, r.OnExitCodes.ContainerName, c.Name)
			}
			if r.Action == "FailIndex" && job.Spec.BackoffLimitPerIndex == nil {
				t.Error("FailIndex needs backoffLimitPerIndex")
			}
		}
	}

	if len(c.Args) == 0 || c.Args[0] != "explore" {
		t.Fatalf("explore Job's args %q do not start with explore", c.Args)
	}
	f := newExploreFlags()
	if err := f.fs.Parse(c.Args[1:]); err != nil {
		t.Fatalf("check explore refuses the manifest's args %q: %v", c.Args[1:], err)
	}
	if f.fs.NArg() > 0 {
		t.Fatalf("check explore refuses the manifest's args: unexpected argument %q", f.fs.Arg(0))
	}
	given := map[string]string{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = fl.Value.String() })
	value := func(name string) string { return f.fs.Lookup(name).Value.String() }
	if _, _, err := lockTopologies(value("lock"), value("topology"), value("topology") != ""); err != nil {
		t.Errorf("-lock %q -topology %q: %v", value("lock"), value("topology"), err)
	}
	if _, ok := given["seed"]; !ok {
		t.Error("no -seed: each shard would draw from its own clock, and the shards would not be shares of one exploration")
	}
	if _, ok := given["runs"]; !ok {
		t.Error("no -runs: the shards together would not make the runs one process makes")
	}
	if _, ok := given["replay"]; ok {
		t.Error("-replay makes one run: nothing to shard")
	}
	if _, ok := given["shard"]; ok {
		t.Error("-shard in the args gives every pod the same shard; each reads its own from JOB_COMPLETION_INDEX")
	}
	if b := value("backend"); b != "local" {
		t.Errorf("-backend %s: a pod has no Docker daemon; the servers run in it as processes (local)", b)
	}
	out := value("out")
	pvc := m.pvc.Metadata.Name
	if mount := mountOf(t, job, pvc); mount != out {
		t.Errorf("the volume is mounted at %s, but -out is %s", mount, out)
	}
	if !slices.Contains(m.pvc.Spec.AccessModes, "ReadWriteMany") {
		t.Errorf("the claim's access modes %v lack ReadWriteMany: the shards run on any node at once", m.pvc.Spec.AccessModes)
	}

	// The merge: check merge [-out DIR] DIR..., over the folder holding the
	// shard folders, on the same volume mounted at the same path.
	mc := m.merge.Spec.Template.Spec.Containers[0]
	if len(mc.Args) == 0 || mc.Args[0] != "merge" {
		t.Fatalf("merge Job's args %q do not start with merge", mc.Args)
	}
	mfs := flag.NewFlagSet("check merge", flag.ContinueOnError)
	mfs.SetOutput(io.Discard)
	mergeOut := mfs.String("out", "", "")
	if err := mfs.Parse(mc.Args[1:]); err != nil {
		t.Fatalf("merge Job's args %q: %v", mc.Args[1:], err)
	}
	if mount := mountOf(t, m.merge, pvc); mount != out {
		t.Errorf("the merge mounts the volume at %s, the shards at %s", mount, out)
	}
	if got := mfs.Args(); len(got) != 1 || filepath.Clean(got[0]) != filepath.Clean(out) {
		t.Errorf("merge reads %q, want [%s], the shards' -out", got, out)
	}
	if *mergeOut != "" {
		rel, err := filepath.Rel(out, *mergeOut)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.HasPrefix(rel, "shard-") {
			t.Errorf("merge -out %s: want a folder on the volume (%s), beside the shard folders", *mergeOut, out)
		}
	}
}

// TestK8sImage builds locklab/check and makes one run in it as the Job's
// pods would: as the manifest's user, -out a mounted folder.
func TestK8sImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs a container")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := exec.CommandContext(ctx, "docker", "version").Run()
	cancel()
	if err != nil {
		t.Skipf("no Docker daemon answers (docker version: %v): locklab/check cannot be built", err)
	}

	start := time.Now()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "sh", "docker/build.sh", "check")
	build.Dir = "../.."
	var stderr bytes.Buffer
	build.Stderr = &stderr
	stdout, err := build.Output()
	if err != nil {
		t.Fatalf("docker/build.sh check: %v\n%s", err, stderr.Bytes())
	}
	tag := strings.TrimSpace(string(stdout))
	if !strings.HasPrefix(tag, "locklab/check:") || strings.ContainsAny(tag, " \n") {
		t.Fatalf("docker/build.sh check printed %q, want the image's tag alone", stdout)
	}
	t.Logf("%s ready in %s", tag, time.Since(start).Round(time.Millisecond))

	// The pod's user, so that the image is shown to need no root; a test
	// that is not root can only write its folder as itself.
	out := t.TempDir()
	user := os.Getuid()
	if user == 0 {
		user = readK8sManifests(t).explore.Spec.Template.Spec.SecurityContext.RunAsUser
		if err := os.Chmod(out, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	name := fmt.Sprintf("locklab-k8s-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	// Removed even when the run below is cut short, where --rm may not
	// have done it.
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	runCtx, cancelRun := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRun()
	run := exec.CommandContext(runCtx, "docker", "run", "--rm", "--name", name,
		"--user", fmt.Sprintf("%d:%d", user, user), "-v", out+":/out", "-e", "JOB_COMPLETION_INDEX=1", "-e", shardsEnv+"=2", tag,
		"explore", "-lock", "token-watchdog", "-runs", "2", "-parallel", "1", "-seed", "7", "-out", "/out", "-json")
	stderr.Reset()
	run.Stderr = &stderr
	start = time.Now()
	stdout, err = run.Output()
	if err != nil {
		t.Fatalf("check explore in %s: %v\n%s", tag, err, stderr.Bytes())
	}
	t.Logf("one run in the container in %s", time.Since(start).Round(time.Millisecond))
	var rep struct {
		Lock   string `json:"lock"`
		Runs   int    `json:"runs"`
		Errors int    `json:"errors"`
		Shard  string `json:"shard"`
	}
	if err := json.Unmarshal(stdout, &rep); err != nil {
		t.Fatalf("check explore -json printed no report: %v\n%s", err, stdout)
	}
	// Shard 1 of 2 of a 2-run campaign makes run 1 alone, as an Indexed
	// Job's pod with that completion index would.
	if rep.Lock != "token-watchdog" || rep.Runs != 1 || rep.Errors != 0 || rep.Shard != "1/2" {
		t.Errorf("report: lock %q, shard %q, %d runs, %d could not run; want token-watchdog, shard 1/2, 1 run that ran", rep.Lock, rep.Shard, rep.Runs, rep.Errors)
	}
	// The shard wrote into its own folder of the mounted -out, where check
	// merge reads it.
	shard := filepath.Join(out, "shard-1")
	if _, err := merge.ReadReport(filepath.Join(shard, explore.ReportFileName("token-watchdog", cluster.Single))); err != nil {
		t.Errorf("no shard report in the mounted -out: %v", err)
	}
	if runs, err := merge.ReadRuns(filepath.Join(shard, explore.RunsFileName("token-watchdog", cluster.Single))); err != nil || len(runs) != 1 || runs[0].Run != 1 {
		t.Errorf("the shard's runs %+v, %v; want run 1 alone", runs, err)
	}
}
