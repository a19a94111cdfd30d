package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/cluster/internal/backendkit"
	"github.com/locklab/locklab/cluster/local"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/etcd"
	redisservice "github.com/locklab/locklab/service/redis"
	"github.com/locklab/locklab/service/redis/sentinel"
	"github.com/locklab/locklab/service/sqldb"
)

var (
	dockerOnce sync.Once
	dockerErr  error // why the docker tests cannot run
	dockerSkip bool  // no daemon answers: skip them rather than fail
)

// testDocker returns the docker backend once its images are built (by
// docker/build.sh, which skips those that exist), or skips the test with one
// line when no Docker daemon answers.
func testDocker(tb testing.TB) Docker {
	tb.Helper()
	dockerOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, dockerErr = (Docker{}).pool(ctx); dockerErr != nil {
			dockerSkip = true
			return
		}
		out, err := exec.CommandContext(ctx, "../../docker/build.sh").CombinedOutput()
		if err != nil {
			dockerErr = fmt.Errorf("docker/build.sh: %w\n%s", err, out)
			return
		}
		dockerErr = (Docker{}).Ready(ctx, true)
	})
	if dockerSkip {
		tb.Skipf("docker backend not tested: %v", dockerErr)
	}
	if dockerErr != nil {
		tb.Fatal(dockerErr)
	}
	return Docker{}
}

// startDockerCluster starts cfg on the docker backend; at the end of the
// test it is closed and nothing of its run may be left.
func startDockerCluster(tb testing.TB, cfg cluster.Config) (*cluster.Cluster, string) {
	tb.Helper()
	cfg.Backend = testDocker(tb)
	if cfg.Service == nil {
		cfg.Service = service.LockService(cfg.Topology) // nil but for the SQL topologies
	}
	c, err := cluster.Start(within(tb, time.Minute), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	id := runOf(c).id
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
		if left := labelled(tb, dockerRunLabel+"="+id); len(left) > 0 {
			tb.Errorf("run %s left %v", id, left)
		}
	})
	return c, id
}

// runOf is the docker run that started c's servers.
func runOf(c *cluster.Cluster) *dockerRun {
	return c.Inventory().(*dockerNode).run
}

// within returns a context that ends after d, for commands expected to answer.
func within(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	tb.Cleanup(cancel)
	return ctx
}

// failoverBudget is how long a failover may take, from the master's death to
// a majority of Sentinels naming a new one (as in the cluster package's tests).
const failoverBudget = 5 * time.Second

// set writes key=value on n.
func set(t *testing.T, n cluster.Node, key, value string) {
	t.Helper()
	if err := n.(sentinel.Node).Admin().Set(within(t, 2*time.Second), key, value, 0).Err(); err != nil {
		t.Fatalf("SET %s on %s: %v", key, n.Name(), err)
	}
}

// awaitValue polls n until key holds want ("" for absent), within 3 s.
func awaitValue(t *testing.T, n cluster.Node, key, want string) {
	t.Helper()
	if err := backendkit.AwaitValue(within(t, 3*time.Second), n.(sentinel.Node).Admin(), n.Name(), key, want); err != nil {
		t.Fatal(err)
	}
}

// infoValue returns the value of field in the text of an INFO reply, "" if absent.
func infoValue(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// labelled lists the containers, networks and volumes that carry label.
func labelled(tb testing.TB, label string) []string {
	tb.Helper()
	pool, err := (Docker{}).pool(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	var left []string
	containers, err := pool.Client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"label": {label}}})
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range containers {
		left = append(left, "container "+strings.Join(c.Names, ","))
	}
	networks, err := pool.Client.FilteredListNetworks(dc.NetworkFilterOpts{"label": {label: true}})
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range networks {
		left = append(left, "network "+n.Name)
	}
	volumes, err := pool.Client.ListVolumes(dc.ListVolumesOptions{Filters: map[string][]string{"label": {label}}})
	if err != nil {
		tb.Fatal(err)
	}
	for _, v := range volumes {
		left = append(left, "volume "+v.Name)
	}
	return left
}

func TestDockerTopologies(t *testing.T) {
	for _, tc := range []struct {
		topology cluster.Topology
		masters  int
	}{{cluster.Single, 1}, {cluster.Replicated, 3}, {cluster.Redlock, 5}} {
		t.Run(string(tc.topology), func(t *testing.T) {
			c, id := startDockerCluster(t, cluster.Config{Topology: tc.topology})
			if got := len(c.LockNodes()); got != tc.masters {
				t.Fatalf("%d lock nodes, want %d", got, tc.masters)
			}
			// The lag meter counts the containers' threads from these.
			containers := slices.DeleteFunc(labelled(t, dockerRunLabel+"="+id), func(s string) bool { return !strings.HasPrefix(s, "container ") })
			pids := c.ServerPids()
			if len(pids) != len(containers) {
				t.Errorf("server pids %v for %d containers", pids, len(containers))
			}
			for _, pid := range pids {
				if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || string(comm) != "locklab-init\n" {
					t.Errorf("server pid %d runs %q (%v), want locklab-init", pid, comm, err)
				}
			}
			for _, n := range append(c.LockNodes(), c.Inventory()) {
				if !strings.HasPrefix(n.Addr(), "127.0.0.1:") {
					t.Errorf("%s is published at %s, want 127.0.0.1 only", n.Name(), n.Addr())
				}
			}
			master := c.LockNodes()[0]
			if rs, ok := c.Deployment().(cluster.Replicas); ok {
				var err error
				if master, err = rs.Master(within(t, 5*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			set(t, master, "k", "v")
			if tc.topology == cluster.Replicated {
				for _, n := range c.LockNodes()[1:] {
					awaitValue(t, n, "k", "v")
				}
			}
		})
	}
}

func TestDockerNodeFaults(t *testing.T) {
	c, _ := startDockerCluster(t, cluster.Config{Topology: cluster.Single, Persistence: cluster.AOFAlways})
	n := c.LockNodes()[0]
	set(t, n, "k", "v")
	ctx := within(t, 30*time.Second)

	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if n.Running() {
		t.Error("Running after Kill")
	}
	if err := n.(sentinel.Node).Admin().Ping(within(t, time.Second)).Err(); err == nil {
		t.Error("a killed node answers PING")
	}
	if err := n.Restart(ctx, true); err != nil {
		t.Fatal(err)
	}
	awaitValue(t, n, "k", "v")
	if err := n.Restart(ctx, false); err != nil {
		t.Fatal(err)
	}
	awaitValue(t, n, "k", "")

	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := n.(sentinel.Node).Admin().Ping(within(t, 300*time.Millisecond)).Err(); err == nil {
		t.Error("a paused node answers PING")
	}
	if !n.Running() {
		t.Error("a paused node is not Running")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := n.(sentinel.Node).Admin().Ping(within(t, 2*time.Second)).Err(); err != nil {
		t.Errorf("PING after Resume: %v", err)
	}
}

func TestDockerCutReplication(t *testing.T) {
	c, id := startDockerCluster(t, cluster.Config{Topology: cluster.Replicated})
	rs := redisservice.ReplicaSet(c)
	master, cut, other := rs.Nodes()[0], rs.Nodes()[1], rs.Nodes()[2]
	heal, err := rs.CutReplication(within(t, 5*time.Second), cut)
	if err != nil {
		t.Fatal(err)
	}
	// At the network: the replica has left the pair network it shares with
	// the master, and only that one.
	pool, _ := (Docker{}).pool(context.Background())
	info, err := pool.Client.InspectContainer(fmt.Sprintf("locklab-%s-%s", id, cut.Name()))
	if err != nil {
		t.Fatal(err)
	}
	var nets []string
	for name := range info.NetworkSettings.Networks {
		nets = append(nets, strings.TrimPrefix(name, "locklab-"+id))
	}
	if want := []string{"", "-n2-n3"}; !sameSet(nets, want) {
		t.Errorf("cut replica is on networks %q, want %q", nets, want)
	}

	set(t, master, "k", "cut")
	awaitValue(t, other, "k", "cut")
	// The master waits for both replicas and gets one acknowledgement.
	if acked, err := master.Admin().Do(within(t, 2*time.Second), "WAIT", 2, 300).Int(); err != nil || acked != 1 {
		t.Errorf("WAIT 2 during the cut = %d, %v; want 1", acked, err)
	}
	if got, err := cut.Admin().Get(within(t, time.Second), "k").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("cut replica has k = %q, %v", got, err)
	}
	// The cut replica still answers its clients and the Sentinels.
	if err := cut.Admin().Ping(within(t, time.Second)).Err(); err != nil {
		t.Errorf("cut replica does not answer: %v", err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if err := heal(); err != nil {
		t.Errorf("second heal: %v", err)
	}
	awaitValueWithin(t, cut, "k", "cut", 20*time.Second)

	if _, err := rs.DelayReplication(within(t, time.Second), cut, 10*time.Millisecond); err == nil ||
		!strings.Contains(err.Error(), "docker") {
		t.Errorf("DelayReplication on docker = %v, want an error naming the backend", err)
	}
}

// awaitValueWithin polls n until key holds want, within d.
func awaitValueWithin(t *testing.T, n cluster.Node, key, want string, d time.Duration) {
	t.Helper()
	err := backendkit.PollUntil(within(t, d), "await "+key+" on "+n.Name(), func(ctx context.Context) (string, error) {
		got, err := n.(sentinel.Node).Admin().Get(ctx, key).Result()
		if err != nil || got != want {
			return fmt.Sprintf("GET %s = %q, %v", key, got, err), nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}

func TestDockerFailover(t *testing.T) {
	c, _ := startDockerCluster(t, cluster.Config{Topology: cluster.Replicated})
	rs := redisservice.ReplicaSet(c)
	master := rs.Nodes()[0]
	// With both replicas cut, Sentinel still promotes one: it reaches them
	// on the run network, and the key written during the cut is lost.
	var heals []func() error
	for _, n := range rs.Nodes()[1:] {
		h, err := rs.CutReplication(within(t, 5*time.Second), n)
		if err != nil {
			t.Fatal(err)
		}
		heals = append(heals, h)
	}
	set(t, master, "lost", "1")
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	to, took, err := rs.AwaitFailover(within(t, 30*time.Second), master)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover to %s in %s", to.Name(), took)
	if took > failoverBudget {
		t.Errorf("failover took %s, budget %s", took, failoverBudget)
	}
	awaitValue(t, to, "lost", "")
	for _, h := range heals {
		if err := h(); err != nil {
			t.Error(err)
		}
	}
	if err := master.Restart(within(t, 10*time.Second), false); err != nil {
		t.Fatal(err)
	}
	awaitReplicaOfWithin(t, master, to, 15*time.Second)
	// A failover client reaches the new master by the name Sentinel gives.
	client := rs.FailoverClient(nil, nil)
	defer client.Close()
	if err := client.Set(within(t, 5*time.Second), "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	awaitValue(t, to, "after", "1")
}

// awaitReplicaOfWithin polls until n replicates from master with its link up.
func awaitReplicaOfWithin(t *testing.T, n, master cluster.Node, d time.Duration) {
	t.Helper()
	rs := "" // the address n reports, for the error
	err := backendkit.PollUntil(within(t, d), "await "+n.Name()+" replica of "+master.Name(), func(ctx context.Context) (string, error) {
		info, err := n.(sentinel.Node).Admin().Info(ctx, "replication").Result()
		if err != nil {
			return err.Error(), nil
		}
		rs = infoValue(info, "master_host")
		if rs != master.Name() || infoValue(info, "master_link_status") != "up" {
			return "master_host " + rs + ", link " + infoValue(info, "master_link_status"), nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDockerMariaDB(t *testing.T) {
	c, _ := startDockerCluster(t, cluster.Config{Topology: cluster.Single, Resource: sqldb.MariaDBInventory{}})
	ctx := within(t, 10*time.Second)
	db := c.SQLInventory()
	if err := db.SetupInventory(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Stock(ctx); err != nil || got != 7 {
		t.Fatalf("Stock = %d, %v; want 7", got, err)
	}
	if !strings.Contains(db.DSN(), "tcp(127.0.0.1:") {
		t.Errorf("DSN %s is not on 127.0.0.1", db.DSN())
	}
}

// TestDockerPostgres: the postgres topology on the docker backend: the lock
// table in a container, read as a PTTL, through the published port.
func TestDockerPostgres(t *testing.T) {
	start := time.Now()
	c, _ := startDockerCluster(t, cluster.Config{Topology: cluster.PostgresTopology})
	t.Logf("postgres topology started in %s", time.Since(start).Round(time.Millisecond))
	ctx := within(t, 10*time.Second)
	db := sqldb.Server(c)
	if db == nil || db.Driver() != "pgx" || !strings.Contains(db.DSN(), "@127.0.0.1:") {
		t.Fatalf("lock database %v", db)
	}
	if _, err := db.Admin().ExecContext(ctx, "INSERT INTO "+sqldb.LockTable+" (name, owner, expires_at) VALUES ('k', 'me', now() + INTERVAL '1 minute')"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.LockState(ctx, "k"); err != nil || !got.Expires || got.Left <= 50*time.Second || got.Left > time.Minute {
		t.Errorf("LockState = %v, %v; want about a minute", got, err)
	}
	if err := db.SetupInventory(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Stock(ctx); err != nil || got != 7 {
		t.Fatalf("Stock = %d, %v; want 7", got, err)
	}
}

// TestDockerNoPostgresImage: without its image, a postgres run says so in
// one line that marks it skipped (cluster.ErrNoPostgres).
func TestDockerNoPostgresImage(t *testing.T) {
	testDocker(t)
	_, err := cluster.Start(context.Background(), cluster.Config{Topology: cluster.PostgresTopology, Backend: Docker{PostgresImage: "locklab/postgres:no-such-version"}, Service: sqldb.Postgres{}})
	if !errors.Is(err, cluster.ErrNoPostgres) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Start = %v, want one line wrapping ErrNoPostgres", err)
	}
}

// TestDockerMissingImage checks the one line a missing image gives.
func TestDockerMissingImage(t *testing.T) {
	testDocker(t)
	err := Docker{RedisImage: "locklab/redis:no-such-version"}.Ready(context.Background(), false)
	if !errors.Is(err, ErrNoDocker) || !strings.Contains(err.Error(), "make docker") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check = %v, want one line naming make docker", err)
	}
	_, err = cluster.Start(context.Background(), cluster.Config{Backend: Docker{Endpoint: "unix:///nonexistent/docker.sock"}})
	if !errors.Is(err, ErrNoDocker) || !strings.Contains(err.Error(), "no Docker daemon") {
		t.Errorf("Start with no daemon = %v", err)
	}
}

// dockerChildEnv makes the test binary a run that a test kills.
const dockerChildEnv = "LOCKLAB_DOCKER_CHILD"

// TestDockerSweepAfterKill starts a run in a child process, kills it with
// SIGKILL, and checks that the next start removes what it left.
func TestDockerSweepAfterKill(t *testing.T) {
	if os.Getenv(dockerChildEnv) != "" {
		dockerChild()
		return
	}
	testDocker(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDockerSweepAfterKill$")
	cmd.Env = append(os.Environ(), dockerChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "run "); ok {
				lines <- id
				return
			}
		}
		close(lines)
	}()
	var id string
	select {
	case id = <-lines:
	case <-time.After(time.Minute):
		t.Fatal("the child started no run within a minute")
	}
	if id == "" {
		t.Fatal("the child ended before starting a run")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	left := labelled(t, dockerRunLabel+"="+id)
	if len(left) < 3 {
		t.Fatalf("the killed run left only %v; want its container, network and volume", left)
	}
	// The next start sweeps them.
	startDockerCluster(t, cluster.Config{Topology: cluster.Single})
	if left := labelled(t, dockerRunLabel+"="+id); len(left) > 0 {
		t.Errorf("the next start left the killed run's %v", left)
	}
}

// dockerChild starts a run, prints its ID and waits to be killed.
func dockerChild() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Config{Topology: cluster.Single, Backend: Docker{}, Service: service.LockService(cluster.Single)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	fmt.Printf("run %s\n", runOf(c).id)
	<-ctx.Done() // killed long before; the deadline bounds a child whose parent died
	c.Close()
	os.Exit(0)
}

// BenchmarkStart measures the start-up of each topology on each backend,
// from cluster.Start to every node answering (Sentinels in agreement).
func BenchmarkStart(b *testing.B) {
	for _, backend := range []string{"local", "docker"} {
		for _, topo := range []cluster.Topology{cluster.Single, cluster.Replicated, cluster.Redlock, cluster.EtcdTopology, cluster.ZooKeeperTopology} {
			b.Run(backend+"/"+string(topo), func(b *testing.B) {
				cfg := cluster.Config{Topology: topo, Backend: local.Local{}, Service: service.LockService(topo)}
				if backend == "docker" {
					cfg.Backend = testDocker(b)
				}
				for b.Loop() {
					c, err := cluster.Start(within(b, time.Minute), cfg)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if err := c.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
		}
	}
}

// BenchmarkDockerFailover is BenchmarkFailover on the docker backend: from
// the master's docker kill until a majority of Sentinels name a new master.
func BenchmarkDockerFailover(b *testing.B) {
	backend := testDocker(b)
	for b.Loop() {
		b.StopTimer()
		c, err := cluster.Start(within(b, time.Minute), cluster.Config{Topology: cluster.Replicated, Backend: backend, Service: service.LockService(cluster.Replicated)})
		if err != nil {
			b.Fatal(err)
		}
		r := redisservice.ReplicaSet(c)
		master := r.Nodes()[0]
		b.StartTimer()
		if err := master.Kill(); err != nil {
			b.Fatal(err)
		}
		_, _, err = r.AwaitFailover(b.Context(), master)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// TestDockerEtcd: the etcd topology on docker has a leader; its killed
// leader is replaced, and comes back with its data as a member of the same
// cluster; a restart without data is refused in one line.
func TestDockerEtcd(t *testing.T) {
	start := time.Now()
	c, _ := startDockerCluster(t, cluster.Config{Topology: cluster.EtcdTopology})
	t.Logf("etcd topology started in %s", time.Since(start).Round(time.Millisecond))
	ctx := within(t, 60*time.Second)
	set := etcd.SetOf(c)
	if set == nil || len(set.Endpoints()) != cluster.EtcdMembers {
		t.Fatalf("etcd cluster %v", set)
	}
	if _, err := set.Admin().Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	leader, _, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if leader.Running() {
		t.Error("a killed member still runs")
	}
	err = backendkit.PollUntil(ctx, "a new leader", func(ctx context.Context) (string, error) {
		next, _, err := c.Leader(ctx)
		if err != nil {
			return err.Error(), nil
		}
		if next.Name() == leader.Name() {
			return "the killed member still leads", nil
		}
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Restart(ctx, true); err != nil {
		t.Fatalf("restart with data: %v", err)
	}
	got, err := set.Admin().Get(ctx, "k")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v" {
		t.Errorf("after the leader's kill and restart, k = %v (%v); want v", got, err)
	}
	if err := leader.Restart(ctx, false); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("restart without data: %v, want it refused", err)
	}
}
