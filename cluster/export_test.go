package cluster

// For the tests of package cluster_test, which run the replicated topology
// on the local backend (cluster/local imports cluster, so they cannot be in
// package cluster).
var (
	ReplicaMasterAddr = replicaMasterAddr
	InfoField         = infoField
)
