package footprint

import (
	"encoding/binary"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// body frames msg as a gRPC body: uncompressed, its length first.
func body(msg []byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// put is a PutRequest of key with lease.
func put(key string, lease uint64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte(key))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("owner"))
	if lease != 0 {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, lease)
	}
	return b
}

// txn is a TxnRequest: a compare (not read), success and failure ops,
// each a RequestOp's encoded fields.
func txn(success, failure [][]byte) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte{0x08, 0x01})
	for _, op := range success {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, op)
	}
	for _, op := range failure {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, op)
	}
	return b
}

// requestPut is a RequestOp holding a PutRequest.
func requestPut(p []byte) []byte {
	b := protowire.AppendTag(nil, 2, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

// varints is a message of varint fields, number then value.
func varints(kv ...uint64) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = protowire.AppendTag(b, protowire.Number(kv[i]), protowire.VarintType)
		b = protowire.AppendVarint(b, kv[i+1])
	}
	return b
}

func TestEtcdCall(t *testing.T) {
	const lease = 0x694d7a1c2b3e4f01
	lockPut := requestPut(put("/locks/orders/694d7a1c2b3e4f01", lease))
	rangeOp := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{0x0a, 0x01, 'k'})
	for _, tt := range []struct {
		name           string
		method         string
		request, reply []byte
		want           Footprint
		ok             bool
	}{
		{"a grant, by the TTL granted", "LeaseGrant", body(varints(1, 5)), body(varints(2, lease, 3, 2)),
			Footprint{Lease: 2 * time.Second, LeaseOnly: true, LeaseFrom: "LeaseGrant: TTL 2 s"}, true},
		{"a put with a lease", "Put", body(put("/app/lock", lease)), body(nil),
			Footprint{Key: "/app/lock", Kind: Session, From: "Put /app/lock lease 694d7a1c2b3e4f01", KindFrom: "Put /app/lock lease 694d7a1c2b3e4f01"}, true},
		{"a put without one", "Put", body(put("/app/lock", 0)), body(nil), Footprint{}, false},
		{"a txn that took: its success branch", "Txn", body(txn([][]byte{lockPut}, [][]byte{rangeOp})), body(varints(2, 1)),
			Footprint{Key: "/locks/orders", Kind: Session, From: "Put /locks/orders/694d7a1c2b3e4f01 lease 694d7a1c2b3e4f01",
				KindFrom: "Put /locks/orders/694d7a1c2b3e4f01 lease 694d7a1c2b3e4f01"}, true},
		{"a txn whose compare failed ran its failure branch", "Txn", body(txn([][]byte{lockPut}, [][]byte{rangeOp})), body(varints(2, 0)), Footprint{}, false},
		{"a compressed message", "Put", append([]byte{1}, body(put("/app/lock", lease))[1:]...), body(nil), Footprint{}, false},
		{"a short body", "LeaseGrant", body(nil), []byte{0, 0, 0, 0, 9, 1}, Footprint{}, false},
		{"another method", "Range", body(put("/app/lock", lease)), body(nil), Footprint{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Etcd(tt.method, tt.request, tt.reply)
			if ok != tt.ok || got != tt.want {
				t.Errorf("Etcd = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
