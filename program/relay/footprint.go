package relay

import (
	"strings"

	"github.com/locklab/locklab/footprint"
)

// Acquires is what the program's requests show of its lock (package
// footprint): the program's Acquire marks each acquire on it, and the
// relay's readers note each request.
func (r *Relay) Acquires() *footprint.Acquires { return &r.learn }

// statementFootprint is what an SQL statement, as the relay splits it into
// words, shows.
func statementFootprint(words []string) (footprint.Footprint, bool) {
	return footprint.SQL(strings.Join(words, " "), nil)
}
