package libraries

import (
	"context"
	"time"
)

// refreshLoop calls refresh every ttl/3 until stop closes, ctx ends or a
// refresh fails: a failed refresh means the lease is gone or in doubt, and
// the library's own extend must not be retried blindly.
func refreshLoop(ctx context.Context, ttl time.Duration, stop <-chan struct{}, refresh func(context.Context) error) {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case <-stop:
			return
		default:
		}
		if err := refresh(ctx); err != nil {
			return
		}
	}
}
