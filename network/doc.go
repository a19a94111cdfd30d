// Package network is locklab's network: an in-process toxiproxy server in
// which every client-to-node connection, and every detoured replication
// link, is one Link of its own, so that any single link can be cut, delayed
// or black-holed, and healed.
package network
