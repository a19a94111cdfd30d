package cause

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/locklab/locklab/checker"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// unchanged says a request's statement changed no row, as the server
// said: a DELETE that found nothing freed no one's lock.
func unchanged(r history.Op) bool { return r.Rows != nil && *r.Rows == 0 }

// rowsCause is a statement of another client's acquire, a DELETE or an
// UPDATE the server said changed a row of the lock's, sent after a got
// the lock and before b did, that no expiry of a's lease by the client's
// reckoning explains (expiryCause tells those as cleanups): it took a's
// row over while a held it.
func (e *evidence) rowsCause(a, b checker.Hold) (Cause, bool) {
	for _, r := range slices.Backward(e.requests) {
		if r.Client == a.Client || r.Key != a.Key || r.Outcome != models.OK || r.Call < a.Start || r.Call > b.Start ||
			r.Rows == nil || *r.Rows < 1 || (r.Command != "DELETE" && r.Command != "UPDATE") {
			continue
		}
		verb := "deletes"
		if r.Command == "UPDATE" {
			verb = "takes over"
		}
		return Cause{At: r.Call, Client: r.Client, Kind: Release,
			Text: fmt.Sprintf("client %d's %s (%s, sent at %s) changes %d row: it %s client %d's lock while client %d holds it",
				r.Client, r.Command, phaseWord(r.Phase), ms(r.Call), *r.Rows, verb, a.Client, a.Client)}, true
	}
	return Cause{}, false
}

// serverCause is the servers' own word on what freed a's lock: the node
// or key that held it (the oldest under the lock's parent or prefix when
// it went, which the recipes grant; a's by its data, when its data names
// a client) deleted after a got the lock and before b did, while no
// release that let a in was under way. A request recorded deleting it
// names its client; else an etcd key whose lease was gone went with its
// lease, and a ZooKeeper node, ephemeral to a session, with its session.
func (e *evidence) serverCause(a, b checker.Hold) (Cause, bool) {
	// The first such delete: a later one in the same span may be b's own
	// release, seen before its hold began by the watcher's reckoning.
	for i, s := range e.server {
		ev := s.Server
		if ev.Event != "delete" || s.Return < a.Start || s.Call >= b.Start || (ev.Owner >= 0 && ev.Owner != a.Client) ||
			!e.oldest(i) || e.handover(s, a) {
			continue
		}
		at := clamp(s.Return, a.Start, b.Start)
		whose := fmt.Sprintf("client %d's node %s", a.Client, s.Key)
		if ev.Revision > 0 {
			whose = fmt.Sprintf("client %d's key %s (deleted at revision %d)", a.Client, s.Key, ev.Revision)
		}
		if r, ok := e.deleter(s, b); ok {
			return Cause{At: clamp(r.Call, a.Start, b.Start), Client: r.Client, Kind: Release,
				Text: fmt.Sprintf("client %d's %s (%s, sent at %s) deletes %s while client %d holds the lock", r.Client, r.Command, phaseWord(r.Phase), ms(r.Call), whose, a.Client)}, true
		}
		// A client revokes the lease of its own session: only the
		// holder's revoke could have taken its key.
		revoked := slices.ContainsFunc(e.requests, func(r history.Op) bool {
			return r.Client == a.Client && strings.EqualFold(r.Command, "LEASEREVOKE") && r.Call <= s.Return && history.Returned(r, e.last) >= s.Call
		})
		switch {
		case ev.Revision > 0 && ev.Gone && revoked:
			return Cause{At: at, Client: -1, Kind: Release,
				Text: fmt.Sprintf("the server deletes %s while client %d holds the lock and is not releasing it: its lease %s went, expired or revoked (its LEASEREVOKE was under way)", whose, a.Client, ev.Session)}, true
		case ev.Revision > 0 && ev.Gone:
			return Cause{At: at, Client: -1, Kind: Expiry,
				Text: fmt.Sprintf("the server deletes %s: its lease %s ran out on the server, no client revoking it, and the key went with it", whose, ev.Session)}, true
		case ev.Revision > 0:
			return Cause{At: at, Client: -1, Kind: Release,
				Text: fmt.Sprintf("the server deletes %s while client %d holds the lock and is not releasing it; its lease %s lives on", whose, a.Client, ev.Session)}, true
		case ev.Session != "":
			return Cause{At: at, Client: -1, Kind: Expiry,
				Text: fmt.Sprintf("the server deletes %s, ephemeral to session %s, while client %d holds the lock and is not releasing it: the session expired on the server, and its node went with it", whose, ev.Session, a.Client)}, true
		}
		return Cause{At: at, Client: -1, Kind: Release,
			Text: fmt.Sprintf("the server deletes %s while client %d holds the lock and is not releasing it", whose, a.Client)}, true
	}
	return Cause{}, false
}

// oldest says the node or key of server event i was, when it went, the
// oldest of those under the same parent or prefix that the events show
// alive: the one the lock recipes grant (the lowest czxid, the lowest
// create revision).
func (e *evidence) oldest(i int) bool {
	s := e.server[i]
	parent := path.Dir(s.Key)
	alive := map[string]int64{}
	for _, o := range e.server[:i] {
		switch {
		case path.Dir(o.Key) != parent:
		case o.Server.Event == "delete":
			delete(alive, o.Key)
		default:
			if _, ok := alive[o.Key]; !ok {
				alive[o.Key] = o.Server.Created
			}
		}
	}
	for k, created := range alive {
		if k != s.Key && created > 0 && s.Server.Created > 0 && created < s.Server.Created {
			return false
		}
	}
	return true
}

// handover says a release that ended a hold before a's began (its
// owner's, when the node names one) was under way when server event s
// may have happened: the delete that let a in, seen late, not one that
// freed a's lock.
func (e *evidence) handover(s history.Op, a checker.Hold) bool {
	return slices.ContainsFunc(e.releases, func(r history.Op) bool {
		return r.Call < a.Start && r.Return >= s.Call && r.Call <= s.Return && (s.Server.Owner < 0 || r.Client == s.Server.Owner)
	})
}

// deleter is the request recorded deleting a node or key (a ZooKeeper
// delete, an etcd DeleteRange), sent before server event s was seen and
// before b's hold began, answered after the watcher last saw the node,
// when it is the only one
// and s the only delete then: what deleted it. A key whose lease was gone
// went with its lease, which no other client can revoke. The Go locks'
// ZooKeeper requests are not recorded, a lock program's are (its relay).
func (e *evidence) deleter(s history.Op, b checker.Hold) (history.Op, bool) {
	if s.Server.Gone {
		return history.Op{}, false
	}
	var found []history.Op
	for _, r := range e.requests {
		name := strings.ToUpper(r.Command)
		if (name == "DELETE" || name == "DELETERANGE") && r.Outcome == models.OK && r.Call <= s.Return && r.Call < b.Start && history.Returned(r, e.last) >= s.Call {
			found = append(found, r)
		}
	}
	deletes := 0
	for _, o := range e.server {
		if o.Server.Event == "delete" && o.Call <= s.Return && o.Return >= s.Call {
			deletes++
		}
	}
	if len(found) != 1 || deletes != 1 {
		return history.Op{}, false
	}
	return found[0], true
}
