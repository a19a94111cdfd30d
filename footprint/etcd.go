package footprint

import (
	"encoding/binary"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Etcd reads one unary gRPC call of a lock to etcd, as the relay hands it
// over: its method's last word ("Put", "Txn", "LeaseGrant"), the request
// the program sent and the reply the member gave, each the call's gRPC
// body (5-byte length-prefixed messages: the first is read). It learns:
//
//   - LeaseGrant: the TTL the member granted (its reply's, which may
//     differ from the one asked for), the lease of the session whose
//     keys are attached to it (EtcdGrant);
//   - Put of a key with a lease: a Session hold on it (EtcdPut);
//   - Txn: the puts with a lease of the branch the member ran (its
//     reply's succeeded says which), as concurrency.Mutex and
//     python-etcd3's Lock take a lock.
//
// Messages are read by field number, as etcd's rpc.proto numbers them
// (https://github.com/etcd-io/etcd/blob/main/api/etcdserverpb/rpc.proto);
// a compressed or malformed message shows nothing.
func Etcd(method string, request, reply []byte) (Footprint, bool) {
	switch method {
	case "LeaseGrant":
		rep, ok := grpcMessage(reply)
		if ttl, set := varintField(rep, 3); ok && set && ttl > 0 { // LeaseGrantResponse.TTL
			return EtcdGrant(time.Duration(ttl) * time.Second), true
		}
	case "Put":
		if req, ok := grpcMessage(request); ok {
			return etcdPut(req)
		}
	case "Txn":
		req, okReq := grpcMessage(request)
		rep, okRep := grpcMessage(reply)
		if !okReq || !okRep {
			return Footprint{}, false
		}
		succeeded, _ := varintField(rep, 2) // TxnResponse.succeeded
		branch := protowire.Number(3)       // TxnRequest.failure
		if succeeded != 0 {
			branch = 2 // TxnRequest.success
		}
		for _, op := range bytesFields(req, branch) {
			for _, put := range bytesFields(op, 2) { // RequestOp.request_put
				if f, ok := etcdPut(put); ok {
					return f, true
				}
			}
		}
	}
	return Footprint{}, false
}

// etcdPut reads a PutRequest: key 1, lease 3.
func etcdPut(msg []byte) (Footprint, bool) {
	keys := bytesFields(msg, 1)
	lease, _ := varintField(msg, 3)
	if len(keys) == 0 {
		return Footprint{}, false
	}
	return EtcdPut(string(keys[0]), int64(lease))
}

// grpcMessage is the first message of a gRPC body: a flag byte (1 for a
// compressed message, which is not read), a 4-byte length, the message.
func grpcMessage(body []byte) ([]byte, bool) {
	if len(body) < 5 || body[0] != 0 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if uint64(len(body)-5) < uint64(n) {
		return nil, false
	}
	return body[5 : 5+n], true
}

// varintField is the last value of the varint field num of a message, as
// protobuf's last-one-wins reads it.
func varintField(msg []byte, num protowire.Number) (uint64, bool) {
	var v uint64
	found := false
	walk(msg, func(n protowire.Number, typ protowire.Type, value []byte) {
		if n == num && typ == protowire.VarintType {
			if x, m := protowire.ConsumeVarint(value); m > 0 {
				v, found = x, true
			}
		}
	})
	return v, found
}

// bytesFields are the values of the length-delimited field num of a
// message, in order (a repeated field's, or an embedded message's).
func bytesFields(msg []byte, num protowire.Number) [][]byte {
	var out [][]byte
	walk(msg, func(n protowire.Number, typ protowire.Type, value []byte) {
		if n == num && typ == protowire.BytesType {
			if b, m := protowire.ConsumeBytes(value); m > 0 {
				out = append(out, b)
			}
		}
	})
	return out
}

// walk calls field for each field of msg with its encoded value, until the
// end or a field it cannot read.
func walk(msg []byte, field func(protowire.Number, protowire.Type, []byte)) {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return
		}
		field(num, typ, msg[n:n+m])
		msg = msg[n+m:]
	}
}
