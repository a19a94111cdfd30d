package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/locklab/locklab/network"
)

// ClockSkew moves one client's wall clock (Client.Now) by By; the heal puts
// it back. Only the lock code's view of time changes, which is the point.
type ClockSkew struct {
	Client int
	By     time.Duration
}

func (f ClockSkew) String() string {
	return fmt.Sprintf("skew the wall clock of client %d by %s", f.Client, f.By)
}

// About: its effect is a stall: the lock code's view of time is wrong, as when the
// client had stopped for By, so it may renew or give up too late.
func (f ClockSkew) About() About {
	return onClient("clock-skew", f.Client)
}

// Inject moves the clock.
func (f ClockSkew) Inject(ctx context.Context, env *Env) (network.Heal, error) {
	c, err := env.client(f.Client)
	if err != nil {
		return nil, err
	}
	c.SetSkew(f.By)
	return once(func() error { c.SetSkew(0); return nil }), nil
}
