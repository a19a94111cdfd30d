package harness

import (
	"fmt"
	"slices"
)

// Unrelayed says why faults at a lock program's own requests cannot strike
// it on the service e names, or "" when a relay can read its requests and
// strike them (Redis on single and redlock: package program's relay reads
// RESP; PostgreSQL: it reads the simple-query protocol). A program dials e itself, through the client's links, so network
// faults and its process's crash, pause and clock skew still reach it.
func (e Endpoints) Unrelayed() string {
	switch {
	case len(e.Sentinels) > 0:
		return "the lock is a program on the replicated topology: Sentinel hands it the nodes' own addresses, past locklab's relay, so no fault can strike its commands"
	case e.MySQL != "":
		return "the lock is a program on the mariadb topology: locklab's relay reads Redis's and PostgreSQL's protocols, not MySQL's, so a program's statements go to its link unread and no fault can strike them"
	case len(e.Etcd) > 0:
		return "the lock is a program on the etcd topology: etcd speaks gRPC over HTTP/2, which no relay of locklab's reads, so no fault can strike its requests (nor a Go lock's: etcd's client has no command hook)"
	}
	return ""
}

// Quiet says, one line each, why a drawn (optional) failpoint at the lock's
// own commands never struck: the lock is a program whose requests no relay
// reads (Endpoints.Unrelayed). Its run's verdicts stand, but they say
// nothing about that fault.
func (f *Failpoints) Quiet() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for i, fp := range f.armed {
		if !fp.Optional || !f.gaveUp[i] || f.hits[i] > fp.Skip {
			continue
		}
		what := fp.Action.String()
		if fp.Action.Kind == ActionFault {
			what = fp.Action.Fault.String()
		}
		line := fmt.Sprintf("quiet (%s, at %s, %s): %s", what, fp.Name, who(fp.Client), f.unrelayed)
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return lines
}
