// Package redis is the Redis lock service (topologies single, replicated
// and redlock): what of it locklab's engine must not know, go-redis among
// it, lives here.
package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// Quiet stops go-redis logging every failed dial: under injected faults
// those are expected, and the history records them.
func Quiet() { goredis.SetLogger(quiet{}) }

// quiet is a go-redis logger that says nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
