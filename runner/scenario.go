package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/cluster"
	"github.com/locklab/locklab/failpoint"
	"github.com/locklab/locklab/fault"
	"github.com/locklab/locklab/service"
	"github.com/locklab/locklab/service/sqldb"
)

// Scenario is one experiment: a topology, a workload, and the faults that hit
// it, from failpoints inside the lock and the workload or on a schedule.
type Scenario struct {
	Name        string
	Description string // what it does to the lock, in one or two sentences
	Topology    cluster.Topology
	Persistence cluster.Persistence // what the lock nodes keep on disk across a restart
	Workload    Workload
	Failpoints  []failpoint.Point
	Faults      []ScheduledFault
	// Handover is the longest median wait between two holders that still
	// counts as a prompt handover; 0 means 100 ms.
	Handover time.Duration
	// MinDuration is the shortest workload that tells the scenario's story
	// (Options.Duration below it is refused); 0 means any.
	MinDuration time.Duration
}

// Workload is what every client does: acquire → critical section on the
// inventory (read stock, work, write stock−1) → release, in a loop.
type Workload struct {
	Clients  int           // simulated processes; 0 means 4
	Key      string        // the lock key; "" means "lock"
	TTL      time.Duration // lease TTL locks are asked to use; 0 means 300 ms
	Work     time.Duration // time spent inside each critical section
	Duration time.Duration // how long clients start new cycles; 0 means 2 s
	Retry    time.Duration // mean wait before retrying a refused acquire; 0 means 4 ms
	Timeout  time.Duration // Redis read/write/dial timeout; 0 means 1 s
	Stock    int64         // inventory at the start; 0 means 1,000,000
	// Resource is where the inventory lives; "" means Redis.
	Resource Resource
	// ReleaseBeforeCommit releases the lock before the resource's
	// transaction commits, as a lock inside a @Transactional method does.
	// Only meaningful with an SQL resource (MariaDB, PostgreSQL).
	ReleaseBeforeCommit bool
	// Nested makes each critical section take the same lock again inside, as
	// code that calls another locked function does.
	Nested bool
	// Pool, when above 0, makes the clients the request threads of one
	// service process: they share one pool of Pool connections to the lock
	// servers (service.Pooler), which on SQL also carries the inventory's
	// statements, in place of connections of their own per client. The
	// liveness probe keeps a pool of its own: a fresh process.
	Pool int
}

// Resource names where the inventory lives.
type Resource string

const (
	RedisResource   Resource = "redis"   // a key on its own Redis node
	MariaDBResource Resource = "mariadb" // an InnoDB row, changed in REPEATABLE READ transactions
	// PostgresResource is a row of the postgres topology's server, the
	// lock's, changed in READ COMMITTED transactions (PostgreSQL's
	// default, whose UPDATE, as InnoDB's, writes over a sale committed
	// since the read rather than fail).
	PostgresResource Resource = "postgres"
	// EtcdResource is a key of the etcd topology's cluster, written in a
	// transaction guarded by the lock when the lease offers one
	// (workload_etcd.go).
	EtcdResource Resource = "etcd"
)

// service is what starts the SQL server the resource lives in, or nil when
// it lives elsewhere (the Redis inventory node, etcd's own keys).
func (r Resource) service() cluster.ResourceService {
	switch r {
	case MariaDBResource:
		return sqldb.MariaDBInventory{}
	case PostgresResource:
		return sqldb.PostgresInventory{}
	}
	return nil
}

// withDefaults fills the zero fields.
func (w Workload) withDefaults() Workload {
	if w.Clients == 0 {
		w.Clients = 4
	}
	if w.Key == "" {
		w.Key = "lock"
	}
	if w.TTL == 0 {
		w.TTL = 300 * time.Millisecond
	}
	if w.Duration == 0 {
		w.Duration = 2 * time.Second
	}
	if w.Retry == 0 {
		w.Retry = 4 * time.Millisecond
	}
	if w.Timeout == 0 {
		w.Timeout = time.Second
	}
	if w.Stock == 0 {
		w.Stock = 1_000_000
	}
	if w.Resource == "" {
		w.Resource = RedisResource
	}
	return w
}

// bound is how long a fresh client may wait for the lock, and a client for
// its cycle to finish, before the lock counts as stuck: long enough for any
// lease to expire and for the slowest critical section to end.
func (w Workload) bound() time.Duration {
	return 3*w.TTL + 2*w.Work + 500*time.Millisecond
}

// Validate reports the first thing in s that cannot run.
func (s Scenario) Validate() error {
	w := s.Workload
	switch {
	case s.Name == "":
		return errors.New("scenario has no name")
	case w.Clients < 0:
		return fmt.Errorf("scenario %s: negative client count %d", s.Name, w.Clients)
	case w.TTL < 0, w.Work < 0, w.Duration < 0, w.Retry < 0, w.Timeout < 0, s.Handover < 0, s.MinDuration < 0:
		return fmt.Errorf("scenario %s: negative duration", s.Name)
	case w.Stock < 0:
		return fmt.Errorf("scenario %s: negative stock", s.Name)
	}
	switch w.Resource {
	case "", RedisResource, MariaDBResource, EtcdResource:
	case PostgresResource:
		if s.Topology != cluster.PostgresTopology {
			return fmt.Errorf("scenario %s: resource %s lives in the server of topology %s, not %s", s.Name, w.Resource, cluster.PostgresTopology, s.Topology)
		}
	default:
		return fmt.Errorf("scenario %s: unknown resource %q", s.Name, w.Resource)
	}
	if !cluster.Known(s.Topology) {
		return fmt.Errorf("scenario %s: unknown topology %q", s.Name, s.Topology)
	}
	if err := s.validatePool(); err != nil {
		return err
	}
	for _, f := range s.Faults {
		if f.At < 0 || f.For < 0 {
			return fmt.Errorf("scenario %s: fault %s: negative time", s.Name, f.Fault)
		}
	}
	return s.validateFaults()
}

// validateFaults refuses a fault, scheduled or at a failpoint, that cannot
// strike the scenario's topology (fault.Kind.StrikesOn): its service lacks
// what the fault needs, and the run would fail at the fault, or not happen
// as written.
func (s Scenario) validateFaults() error {
	faults := make([]fault.Fault, 0, len(s.Faults)+len(s.Failpoints))
	for _, f := range s.Faults {
		faults = append(faults, f.Fault)
	}
	for _, p := range s.Failpoints {
		if p.Action.Fault != nil {
			faults = append(faults, p.Action.Fault)
		}
	}
	topology := s.Topology
	if topology == "" {
		topology = cluster.Single
	}
	for _, f := range faults {
		if k := f.About().Kind; !k.StrikesOn(topology) {
			return fmt.Errorf("scenario %s: fault %q (kind %s) cannot strike topology %s: it strikes %s", s.Name, f, k.Name, topology, k.Where())
		}
	}
	return nil
}

// validatePool refuses a shared pool where it cannot be: on a topology
// whose service has none (service.Pooler), or with faults, which strike
// one client's connections, and a shared pool's belong to none.
func (s Scenario) validatePool() error {
	switch p := s.Workload.Pool; {
	case p < 0:
		return fmt.Errorf("scenario %s: negative pool size %d", s.Name, p)
	case p == 0:
		return nil
	case !service.Shares(s.Topology):
		return fmt.Errorf("scenario %s: topology %q's clients have no pool to share", s.Name, s.Topology)
	case len(s.Faults)+len(s.Failpoints) > 0:
		return fmt.Errorf("scenario %s: a shared pool takes no faults yet: its connections are no one client's", s.Name)
	}
	return nil
}

// ScheduledFault injects Fault At a time after the start and heals it For
// later (or when the run ends, whichever is first).
type ScheduledFault struct {
	At    time.Duration
	For   time.Duration // WholeRun: until the run ends
	Fault fault.Fault
	// Crux marks the fault the scenario is about, as Failpoint.Crux does.
	Crux bool
}

// lasting says how long a fault lasts, in a label's words.
func lasting(d time.Duration) string {
	if d >= failpoint.WholeRun {
		return "until the run ends"
	}
	return "for " + d.String()
}
