package relay

import (
	"bufio"
	"errors"
	"net"
	"strings"

	"github.com/locklab/locklab/footprint"
	"github.com/locklab/locklab/program/relay/h2"
)

// etcdStreams are the paths of etcd's streaming calls (its gRPC services:
// https://github.com/etcd-io/etcd/blob/main/api/etcdserverpb/rpc.proto,
// and v3election.proto beside it): a lease's keep-alives, watches,
// snapshots and an election's observers, the session's upkeep and its
// events, which a Go lock's unary interceptor never sees either. They pass
// at once, struck by nothing, as ZooKeeper's pings do.
var etcdStreams = map[string]bool{
	"/etcdserverpb.Lease/LeaseKeepAlive": true,
	"/etcdserverpb.Watch/Watch":          true,
	"/etcdserverpb.Maintenance/Snapshot": true,
	"/v3electionpb.Election/Observe":     true,
	"/grpc.health.v1.Health/Watch":       true,
}

// serveEtcd relays one gRPC connection of the program to an etcd member
// (package h2): each unary call runs through the client's failpoints,
// named by its method in capitals (TXN, PUT, LEASEGRANT), as the Go
// locks' interceptor names their requests (service/etcd); a held call
// holds what the program sends after it on that connection, a held reply
// what the member sends after it, save the streaming calls' frames; what
// a call asked and got shows the lock's footprint (footprint.Etcd). A
// connection that is not HTTP/2 is piped.
func (r *Relay) serveEtcd(down net.Conn, in *bufio.Reader, upConn net.Conn, out *bufio.Reader) {
	err := h2.Serve(down, in, upConn, out, h2.Calls{
		Unary: func(path string) bool { return !etcdStreams[path] },
		Run: func(path string, send func() error) bool {
			var sendErr error
			sent := false
			err := r.cmds.Statement([]string{strings.ToUpper(path[strings.LastIndex(path, "/")+1:])}, func() (any, error) {
				sent, sendErr = true, send()
				return nil, sendErr
			})
			return sent && err == sendErr
		},
		Done: func(path string, request, reply []byte) {
			r.learn.Seen(footprint.Etcd(path[strings.LastIndex(path, "/")+1:], request, reply))
		},
	})
	if errors.Is(err, h2.ErrNotHTTP2) {
		pipe(down, in, upConn, out)
	}
}
