package compare

import "fmt"

// Family is the text under the table for one family of locks: what a user
// gives up with it and what fixes that, after seed 001's comparison, with
// the cells of this comparison that bear on it.
type Family struct {
	Name     string     `json:"name"`
	GivesUp  string     `json:"gives_up"`
	Fix      string     `json:"fix"`
	Evidence []Evidence `json:"evidence"` // one per cell of the family that ran
}

// Evidence is one cell cited under the table: "lock × class (scenario):
// verdict", and the run's page.
type Evidence struct {
	Text string `json:"text"`
	Page string `json:"page,omitempty"`
}

// prose is what each family's text says; the evidence comes from the runs.
var prose = []Family{
	{Name: InProcess,
		GivesUp: "Everything: a mutex inside each process shares nothing with the other processes, so two of them enter the critical section together under no fault at all.",
		Fix:     "Any of the shared locks below."},
	{Name: Redis,
		GivesUp: "Seed 001's cache locks are leases on a node that replicates asynchronously. A holder paused past its lease loses the lock without knowing it (the watchdog cannot renew what a stopped process does not run); a failover can promote a replica that never had the key, and WAIT narrows that window without closing it; Redlock trades the failover for clocks and for nodes that restart empty.",
		Fix:     "No lease fixes a paused holder: the resource has to refuse a stale holder's write. The fenced lock's token (INCR, checked by the resource) does, on one node; a failover that loses the counter still needs persistence or consensus."},
	{Name: Database,
		GivesUp: "Seed 001 advises against them: a row or GET_LOCK lock is tied to its connection or its expiry, so a killed connection or a holder paused past the row's expiry lets a second client in; and a lock that waits in the server (FOR UPDATE, GET_LOCK) holds a pooled connection while it waits, so a service whose holder needs a second connection from a pool smaller than its waiters stands still (the seed's exhausted pool, pitfall d3b).",
		Fix:     "Make the database refuse the stale write itself: the write in the lock's own transaction (FOR UPDATE with its transaction, which also needs one connection per request), or an optimistic version check on the write; both ride on the data's own consistency rather than on the lock. The optimistic row has no lock at all (every acquire succeeds), so its lock verdict is always illegal: its resource verdict is the one that counts."},
	{Name: Consensus,
		GivesUp: "The seed's third way (ZooKeeper; etcd likewise) replicates the lock through consensus before it answers, so a leader failover keeps it. It is still a lease (session or lease TTL): a holder paused past it has lost the lock, and the recipe does not tell it. Unlike Redlock's TTLs, sessions and leases run on the monotonic clock: a server's wall clock that jumps expires none (ZooKeeper, run; etcd, by its source).",
		Fix:     "Guard the protected write with the lock itself: etcd's transaction on the lock key's revision (guarded write), or ZooKeeper's zxid as a fencing token."},
	{Name: Cache,
		GivesUp: "memcached keeps a lock as it keeps any cached item: on one server, in memory only, for as long as it has room. A restart loses every lock, a writer that fills the server's memory makes it evict a held lock, and a paused holder loses its lease as on Redis, and so does a holder whose server's clock jumps: memcached counts expiry by its monotonic clock, which a step of the wall clock leaves alone, but a jump of that clock (libfaketime, run) expires every item early. Expiry counts whole seconds of the server's clock, so a lease of one second can last a moment.",
		Fix:     "A lease of two seconds at least, renewed and released by a cas of the holder's own item; for safety, a lock service that neither evicts nor forgets on restart, or a fenced resource."},
}

// families is the text under the table for the families present in rows,
// each with the cells of its rows that ran.
func families(rows []RowResult) []Family {
	var out []Family
	for _, f := range prose {
		present := false
		for _, r := range rows {
			if r.Family != f.Name {
				continue
			}
			present = true
			for _, c := range r.Cells {
				if c.Scenario == "" || c.Text == None {
					continue
				}
				f.Evidence = append(f.Evidence, Evidence{fmt.Sprintf("%s × %s (%s): %s", r.Title, c.Class, c.Scenario, c.Summary()), c.Page})
			}
		}
		if present {
			out = append(out, f)
		}
	}
	return out
}
