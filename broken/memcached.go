package broken

import (
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/service/memcached"
)

// NewMemcachedGetDelete is pitfall m1's lock: memcached's get-then-del,
// a release by get, a comparison of the token and a plain delete.
func NewMemcachedGetDelete(c *harness.Client) harness.Locker {
	return memcached.Lock{PlainDelete: true, NoRenewal: true}.For(c)
}

// NewMemcachedOneSecond is pitfall m2's lock: the correct lock, renewal
// included, asking for an expiry of one second.
func NewMemcachedOneSecond(c *harness.Client) harness.Locker {
	return memcached.Lock{Seconds: 1}.For(c)
}
