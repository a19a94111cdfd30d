// Package reference holds the correct locks: those whose every failure is
// inherent to their kind, as the catalogue shows. Among them are the
// references of Redis's topologies, the locks a failure is measured
// against there: [TokenLock] with its watchdog on one master
// ([NewWatchdogLock]), [ReentrantLock] where critical sections nest, and
// [Redlock] on five masters. [For] names the reference of any topology:
// these for Redis, and for the services behind the seam the one each
// service offers (service/sqldb's unique-row, service/etcd's etcd-mutex,
// service/zookeeper's zk-lock, service/memcached's add lock). A failure a
// lock shares with the reference of its topology is inherent to the fault,
// not the lock's own; package runner makes that comparison.
//
// It also holds the other correct designs: fencing on Redis
// ([NewFencedLock], [NewFencedRedlock]), WAIT for a replica
// ([NewWaitReplicasLock]), and the SQL locks: the row lock of a
// transaction left open ([NewForUpdateLock], [NewForUpdateLockTx],
// [NewForUpdateLockNoWait]), MariaDB's GET_LOCK ([NewGetLock],
// [NewGetLockTx]), PostgreSQL's advisory locks ([NewAdvisoryPinned],
// [NewAdvisoryTx]) and the optimistic write that takes no lock
// ([NewOptimistic]). A correct design can still be used wrongly: the token
// lock under work past its fixed lease, or a session lock taken on a
// pool; such a use is a pitfall of its own, registered by package locks.
// Broken designs are package broken's.
package reference
