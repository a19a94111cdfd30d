// Package reference holds the reference locks of Redis's topologies, the
// correct locks a failure is measured against there: [TokenLock] with its
// watchdog on one master ([NewWatchdogLock]), [ReentrantLock] where
// critical sections nest, and [Redlock] on five masters. [For] names the
// reference of any topology: these for Redis, and for the services behind
// the seam the one each service offers (service/sqldb's unique-row,
// service/etcd's etcd-mutex, service/zookeeper's zk-lock,
// service/memcached's add lock). A failure a lock shares with the
// reference of its topology is inherent to the fault, not the lock's own;
// package runner makes that comparison.
//
// It also holds the SQL lock designs the database pitfalls and their fixes
// are made of, correct and not, since they share their code: the row lock
// of a transaction left open ([NewForUpdateLock], [NewForUpdateLockTx],
// [NewForUpdateLockNoWait]), MariaDB's GET_LOCK ([NewGetLock],
// [NewGetLockTx], and [NewGetLockPool], which borrows its connection from a
// pool), a PostgreSQL advisory lock in a transaction ([NewAdvisoryTx]),
// and the optimistic write that takes no lock ([NewOptimistic],
// [NewNoLock]). Package pitfalls's catalogue says which is which.
package reference
