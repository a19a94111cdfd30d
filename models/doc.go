// Package models holds the porcupine models locklab checks histories with:
// [LockModel], mutual exclusion as the clients believe it, and
// [InventoryModel], the stock counter the lock protects.
//
// The models are pure sequential specifications. They know nothing of Redis,
// leases or clocks: a history records what every client saw, and a model says
// which orders of those observations are possible. An operation whose
// [Outcome] is [Unknown] is kept in the history with its Return set to the end
// of the run, so porcupine may place it anywhere after its call; the models
// never count it as a success.
package models
