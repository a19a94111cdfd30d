// Package broken holds the locks with a bug of their own, one file per
// design, each the broken lock of a catalogue pitfall (package pitfalls)
// and registered under the pitfall's name (package locks): a lock inside
// each process, SETNX then EXPIRE, a client-clock timestamp taken over by
// GETSET, no expiry, no release, a plain DEL, a GET then DEL, Redlock that
// ignores its elapsed time, the unique row that never expires, a session
// lock taken on a pool, no lock at all, and memcached's get then delete and
// its one-second expiry. Where a broken lock is a correct design with a
// part taken away, its code is the correct design's (package reference,
// service/sqldb, service/memcached), and its constructor here says what is
// taken away.
package broken
