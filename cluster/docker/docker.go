// Package docker is the cluster backend that runs every server of a run in a
// container of its own, with dockertest, on a Docker network made for the
// run: the same topologies and faults as local processes, on servers that
// share no host with the harness or each other. Its images are built offline
// from this machine's binaries by docker/build.sh (make docker).
package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/locklab/locklab/cluster"
)

// The docker backend runs every server in a container of images that
// docker/build.sh builds from this machine's own binaries (`make docker`).
//
// Each run gets its own user-defined bridge network, with a subnet of its
// own picked in dockerSubnets so that every container has a fixed address
// on it: a killed container starts again at the same address, which the
// Sentinels, who resolved it once, keep dialling. Clients reach each server
// through the in-process toxiproxy at a port published on 127.0.0.1 only.
//
// In each Redis container, redis-server runs under locklab-init
// (docker/init), which crashes it with SIGKILL and starts it again in place
// when told to on a second published port: a kill and restart take
// milliseconds, as a local process's do, where docker kill and docker start
// take some 600 ms, longer than the catalogue's 300 ms leases. Data lives in
// a volume per node; a restart without data empties it. Pause is docker
// pause (the cgroup freezer). An etcd member, a ZooKeeper server and the
// server of a lock service started from its cluster.ServerSpec (memcached;
// server.go) run under locklab-init too, each in a container of its own.
//
// How one replica's replication is cut at the network. Sentinel makes every
// replica replicate from the very address it knows the master by, so all
// replicas of one master dial the same name, and one network cannot cut one
// replica alone. So names resolve per container: each container's /etc/hosts
// (images look there before DNS) maps every node's name to its address on the
// run network, except that in a data node of the replicated topology the name
// of each other data node maps to that node's address on a small internal
// network of their pair. The Sentinels monitor the data nodes by name
// (resolve-hostnames, announce-hostnames), hand out names, and reach them on
// the run network; replication flows on the pair networks. Cutting a
// replica's replication disconnects it from the pair network it shares with
// the master (`docker network disconnect`): its packets to the master go
// nowhere, as in a real partition, while the Sentinels and clients still
// reach it. The heal connects it again at the same address and resets the
// replica's replication connection, as a healed local link does, so that it
// catches up from the master's backlog at once rather than at TCP's next
// retransmission. Whichever node is master, before and after failovers, the
// pair networks cover every path.

// Labels on every container, network and volume of the docker backend.
const (
	dockerRunLabel   = "locklab.run"   // the run's ID
	dockerPIDLabel   = "locklab.pid"   // the pid of the process that owns the run
	dockerHostLabel  = "locklab.host"  // the host name of that process
	dockerStartLabel = "locklab.start" // that process's boot ID and start time, against pid reuse
)

const (
	dockerRedisRepo   = "locklab/redis"
	dockerMariaDBRepo = "locklab/mariadb"
	dockerRedisPort   = 6379
	dockerInitPort    = 7000 // locklab-init's control port (docker/init)
	// dockerRevision is what locklab adds to the images (docker/build.sh's
	// REVISION): an image of another revision lacks what this code needs.
	dockerRevision     = "4"
	dockerSentinelSeed = "/etc/locklab-sentinel.conf"
	dockerMariaDBPort  = 3306
	dockerDataDir      = "/data"
	dockerStartTrials  = 3
	dockerLogTailLines = 10 // the lines of a container's log an error quotes
	dockerSentinelConf = "sentinel.conf"
	dockerStopTimeout  = 10 * time.Second
	// The run networks' subnets are /24s of this range: the run network is
	// the first /26, the pair networks are /29s after it.
	dockerSubnets      = "10.213.0.0/16"
	dockerSubnetTrials = 8
	dockerPairBase     = 64
	dockerPairSize     = 8
	dockerMaxPairs     = (256 - dockerPairBase) / dockerPairSize
)

// dockerHosts are the names every container can resolve, with their fixed
// host part on the run network; others get one from dockerFirstFreeHost on.
var dockerHosts = map[string]int{
	"n1": 2, "n2": 3, "n3": 4, "n4": 5, "n5": 6,
	"inventory": 9, "s1": 11, "s2": 12, "s3": 13, "e1": 14, "e2": 15, "e3": 16, "z1": 17, "z2": 18, "z3": 19, "mariadb": 20, "postgres": 21,
}

const dockerFirstFreeHost = 32

// ErrNoDocker means the docker backend cannot be used here: no Docker daemon
// answers, or the images are not built. Its message names the fix.
var ErrNoDocker = errors.New("docker backend unavailable")

// Docker runs every server in a container, with dockertest. It starts nothing
// itself: each run gets its own RunSession from StartRun. The zero value uses
// DOCKER_HOST (or the local socket) and the newest locklab images.
type Docker struct {
	// Endpoint is the Docker daemon's address; "" means DOCKER_HOST or the local socket.
	Endpoint string
	// RedisImage, MariaDBImage, PostgresImage, EtcdImage and
	// ZooKeeperImage name the images ("repo:tag"); "" means the newest
	// locklab/redis, locklab/mariadb, locklab/postgres, locklab/etcd and
	// locklab/zookeeper that `make docker` built. A server started from
	// its cluster.ServerSpec runs the newest locklab/<program> (StartServer).
	RedisImage, MariaDBImage, PostgresImage, EtcdImage, ZooKeeperImage string
}

// Name is "docker".
func (Docker) Name() string { return "docker" }

// FaultNotes says how the docker backend's node and replication faults are done.
func (Docker) FaultNotes() map[cluster.Operation]string {
	return map[cluster.Operation]string{
		cluster.NodeKill: "docker backend: a node kill is SIGKILL of the server (redis-server, an etcd member, a ZooKeeper server, the server of any other lock service) by its container's init, " +
			"which keeps the container's network and volume; the restart starts it again there",
		cluster.NodePause: "docker backend: a node pause is docker pause (the cgroup freezer), not SIGSTOP",
		cluster.ReplicationCut: "docker backend: a replication cut disconnects the replica from the network it shares with the master " +
			"(docker network disconnect); the replica learns of it only by timeout, and the heal resets its replication connection",
	}
}

// Ready reports, in one line naming the fix, whether a daemon answers and the
// images are there; mariaDB says whether the MariaDB image is needed too.
func (d Docker) Ready(ctx context.Context, mariaDB bool) error {
	pool, err := d.pool(ctx)
	if err != nil {
		return err
	}
	if _, err := d.image(pool, d.RedisImage, dockerRedisRepo); err != nil {
		return err
	}
	if mariaDB {
		if _, err := d.image(pool, d.MariaDBImage, dockerMariaDBRepo); err != nil {
			return err
		}
	}
	return nil
}

// pool connects to the daemon and checks that it answers.
func (d Docker) pool(ctx context.Context) (*dockertest.Pool, error) {
	pool, err := dockertest.NewPool(d.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: %v (start Docker, or set DOCKER_HOST)", ErrNoDocker, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Client.PingWithContext(pctx); err != nil {
		return nil, fmt.Errorf("%w: no Docker daemon answers at %s (start Docker, or set DOCKER_HOST): %v",
			ErrNoDocker, pool.Client.Endpoint(), err)
	}
	return pool, nil
}

// image returns name when the daemon has it, else the newest tag of repo.
func (Docker) image(pool *dockertest.Pool, name, repo string) (string, error) {
	if name != "" {
		if _, err := pool.Client.InspectImage(name); err != nil {
			return "", fmt.Errorf("%w: no image %s: run `make docker`, or docker/build.sh where no redis-server is installed (%v)", ErrNoDocker, name, err)
		}
		return name, nil
	}
	images, err := pool.Client.ListImages(dc.ListImagesOptions{Filters: map[string][]string{
		"reference": {repo}, "label": {"locklab.revision=" + dockerRevision}}})
	if err != nil {
		return "", fmt.Errorf("%w: list images: %v", ErrNoDocker, err)
	}
	var newest dc.APIImages
	for _, im := range images {
		if len(im.RepoTags) > 0 && im.Created >= newest.Created {
			newest = im
		}
	}
	if len(newest.RepoTags) == 0 {
		return "", fmt.Errorf("%w: no %s image of revision %s: run `make docker`, or docker/build.sh where no redis-server is installed", ErrNoDocker, repo, dockerRevision)
	}
	return newest.RepoTags[0], nil
}

// StartRun removes what killed runs left, checks the Redis image and makes
// the run's network.
func (d Docker) StartRun(ctx context.Context) (cluster.RunSession, error) {
	pool, err := d.pool(ctx)
	if err != nil {
		return nil, err
	}
	sweepDocker(pool.Client)
	redisImage, err := d.image(pool, d.RedisImage, dockerRedisRepo)
	if err != nil {
		return nil, err
	}
	id, err := randomHex(4)
	if err != nil {
		return nil, fmt.Errorf("docker backend: %w", err)
	}
	r := &dockerRun{
		docker: d, pool: pool, id: id, redisImage: redisImage,
		labels: ownerLabels(id), nodes: map[string]*dockerNode{}, pairs: map[[2]string]*dockerPair{},
	}
	if err := r.makeNetwork(ctx); err != nil {
		return nil, err
	}
	return r, nil
}
