package sentinel

// For the tests of package sentinel_test, which run the replicated
// topology on the local backend (cluster/local).
var (
	ReplicaMasterAddr = replicaMasterAddr
	InfoField         = infoField
)
