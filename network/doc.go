// Package network is locklab's network: an in-process toxiproxy server in
// which every client-to-node connection, and every detoured replication
// link, is one Link of its own, so that any single link can be cut, delayed
// or black-holed, and healed. A link copies its connections itself while it
// has no toxic, and hands them to toxiproxy's pipeline when it gets one
// (pump.go).
package network
