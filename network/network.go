package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxiproxyclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// The toxiproxy client takes no context: each of its HTTP calls is bounded only
// by its own 30 s timeout. The methods below therefore check ctx between API
// calls, never during one. On loopback a call takes well under a millisecond.

// Proxy is an in-process toxiproxy server; every link between a client and a node is one of its proxies.
type Proxy struct {
	server *toxiproxy.ApiServer
	api    *http.Server
	served chan error // Serve's result; Close waits for it so no API goroutine outlives the Proxy
	client *toxiproxyclient.Client

	faults atomic.Uint64 // numbers faults, so the toxics of two faults on one link never share a name

	// mu is held shared while a fault is applied or healed, and exclusively by
	// Link and Close, so Close never deletes a proxy under a fault in progress.
	mu     sync.RWMutex
	closed bool
	links  []*Link
}

// Start starts a toxiproxy server whose HTTP API listens on a random port of 127.0.0.1.
// Close it when done.
func Start(ctx context.Context) (*Proxy, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start network: %w", err)
	}
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	n := &Proxy{
		server: server,
		// toxiproxy's own Listen wants a fixed address; serving its routes on our
		// listener is what lets the port be picked by the kernel.
		api:    &http.Server{Handler: server.Routes(), ReadHeaderTimeout: 10 * time.Second},
		served: make(chan error, 1),
		client: toxiproxyclient.NewClient("http://" + ln.Addr().String()),
	}
	go func() { n.served <- n.api.Serve(ln) }()
	return n, nil
}

// Close deletes every proxy, closes the links' listeners and connections, and shuts the API down.
// Calling it again does nothing and returns nil.
func (n *Proxy) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true

	var errs []error
	for _, l := range n.links {
		l.mu.Lock()
		if err := l.proxy.Delete(); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("close link %s: %w", l.name, err))
		}
		l.down()
		ReleasePort(l.port)
		l.mu.Unlock()
	}
	// Backstop: even if an API call above failed, no listener or connection may
	// outlive the Network.
	n.server.Collection.Clear()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.api.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("close network API: %w", err))
		n.api.Close()
	}
	if err := <-n.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("close network API: %w", err))
	}
	return errors.Join(errs...)
}

// Link is one proxy: a listening address on 127.0.0.1 that forwards to one upstream node address.
// Its toxics are those of the toxiproxy proxy of its name; its listener and
// connections are its own (pump.go says why).
type Link struct {
	net                  *Proxy
	name, addr, upstream string
	port                 int                        // addr's, which StablePort reserved for it
	toxics               *toxiproxy.ToxicCollection // the server side of proxy

	// mu serialises the use of proxy, because the client rewrites its fields on
	// every Save, and guards cuts.
	mu    sync.Mutex
	proxy *toxiproxyclient.Proxy
	cuts  int // Cut faults now holding the link down; it listens only while cuts == 0

	// connMu guards what the connections through the link share; a pump
	// takes it, so it is never held while waiting for one.
	connMu   sync.Mutex
	listener net.Listener       // nil while the link is down
	conns    map[*conn]struct{} // open connections, closed by a cut
	seq      uint64             // numbers connections, for unique pipeline names
	toxicsOn [2]int             // toxics per stream.Direction: while > 0, toxiproxy carries that direction
	serving  sync.WaitGroup     // the accept loop
}

// Link creates a proxy named name that listens on a random stable port (StablePort) of 127.0.0.1 and forwards to upstream.
// The name must be unique in the Network and made of letters, digits, '.', '_' and '-'
// (it becomes part of the API's URLs). The upstream need not be up yet:
// every accepted connection dials it afresh.
func (n *Proxy) Link(ctx context.Context, name, upstream string) (*Link, error) {
	if !validName(name) {
		return nil, fmt.Errorf("link %q: name must be non-empty letters, digits, '.', '_' or '-'", name)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	n.mu.Lock() // exclusive: n.links changes
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("link %s: network closed: %w", name, net.ErrClosed)
	}
	l := &Link{net: n, name: name, upstream: upstream, conns: map[*conn]struct{}{}}
	// A stable port, since healing a cut rebinds it; another process may
	// take one between StablePort and the bind, so a few are tried.
	var err error
	for range 5 {
		var port int
		if port, err = StablePort(); err != nil {
			break
		}
		l.addr, l.port = net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), port
		l.connMu.Lock()
		err = l.listen()
		l.connMu.Unlock()
		if err == nil {
			break
		}
		ReleasePort(port)
	}
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	// Disabled, so that toxiproxy never binds the address itself: the
	// proxy only holds the link's toxics.
	p := n.client.NewProxy()
	p.Name, p.Listen, p.Upstream, p.Enabled = name, l.addr, upstream, false
	if err = p.Save(); err == nil {
		l.toxics, err = toxicsOf(n.server, name)
	}
	if err != nil {
		l.down()
		ReleasePort(l.port)
		return nil, fmt.Errorf("link %s: create: %w", name, err)
	}
	l.proxy = p
	n.links = append(n.links, l)
	return l, nil
}

// Name returns the name of the link's proxy.
func (l *Link) Name() string { return l.name }

// Addr returns the address on 127.0.0.1 that a client dials to reach the upstream through the link.
func (l *Link) Addr() string { return l.addr }

// Upstream returns the address of the node the link forwards to.
func (l *Link) Upstream() string { return l.upstream }

// Direction says which way a one-way fault acts.
type Direction string

const (
	Upstream   Direction = "upstream"   // client → node: requests are lost
	Downstream Direction = "downstream" // node → client: replies are lost
)

// Heal undoes a fault. Calling it more than once is harmless. Every fault returns one; callers defer it.
// A fault that returns an error has applied nothing, and its Heal does nothing.
type Heal func() error

// Cut partitions the links: their listeners close, and so do open connections,
// so new ones are refused until Heal; a command in flight has an unknown outcome.
// Honest label: the client notices at once (connection reset, EOF or refused);
// this is not a silent drop, for which see BlackHole.
// Cuts may overlap: a link comes back when the last Cut on it is healed.
// Healing rebinds the link's old port, and fails if something else took it meanwhile.
func (n *Proxy) Cut(ctx context.Context, links ...*Link) (Heal, error) {
	return n.inject(ctx, "cut", links, func(l *Link) (func() error, error) {
		if err := l.cut(); err != nil {
			return nil, err
		}
		return l.uncut, nil
	})
}

// Delay adds latency ± jitter to each direction of the links (toxiproxy's latency toxic,
// in whole milliseconds), so a request and its reply together take at least 2×latency longer.
// It acts on open connections as well as new ones.
func (n *Proxy) Delay(ctx context.Context, latency, jitter time.Duration, links ...*Link) (Heal, error) {
	if latency < time.Millisecond || jitter < 0 {
		return noHeal, fmt.Errorf("delay: latency %v must be at least 1ms and jitter %v not negative", latency, jitter)
	}
	attrs := toxiproxyclient.Attributes{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()}
	id := n.faults.Add(1)
	return n.inject(ctx, "delay", links,
		toxic(fmt.Sprintf("delay-%d-up", id), "latency", Upstream, attrs),
		toxic(fmt.Sprintf("delay-%d-down", id), "latency", Downstream, attrs))
}

// BlackHole makes bytes going in direction dir vanish (toxiproxy's timeout toxic with
// timeout 0) while the connections stay open, so clients see timeouts: unknown outcomes.
// Downstream, the node did execute the commands whose replies were lost.
// Heal closes the connections that were black-holed (the toxic closes them on removal),
// so clients carry on over fresh connections; lost bytes are never delivered.
func (n *Proxy) BlackHole(ctx context.Context, dir Direction, links ...*Link) (Heal, error) {
	if dir != Upstream && dir != Downstream {
		return noHeal, fmt.Errorf("black-hole: direction %q is neither %q nor %q", dir, Upstream, Downstream)
	}
	name := fmt.Sprintf("blackhole-%d-%s", n.faults.Add(1), dir)
	return n.inject(ctx, "black-hole", links,
		toxic(name, "timeout", dir, toxiproxyclient.Attributes{"timeout": 0}))
}

// An action applies one part of a fault to one link and returns how to undo it.
type action func(l *Link) (undo func() error, err error)

// toxic returns the action that adds the named toxic to a link.
func toxic(name, typ string, dir Direction, attrs toxiproxyclient.Attributes) action {
	sdir := stream.Upstream
	if dir == Downstream {
		sdir = stream.Downstream
	}
	return func(l *Link) (func() error, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.divert(sdir)
		if _, err := l.proxy.AddToxic(name, typ, string(dir), 1, attrs); err != nil {
			l.undivert(sdir)
			return nil, err
		}
		return func() error {
			l.mu.Lock()
			defer l.mu.Unlock()
			if err := l.proxy.RemoveToxic(name); err != nil {
				return err
			}
			l.undivert(sdir)
			return nil
		}, nil
	}
}

// noHeal is what a fault that failed returns, so a deferred call is still safe.
func noHeal() error { return nil }

// inject applies every action to every link. If one fails, what was applied is
// undone, so a failed fault leaves the network as it found it.
func (n *Proxy) inject(ctx context.Context, fault string, links []*Link, actions ...action) (Heal, error) {
	links, err := n.own(links)
	if err != nil {
		return noHeal, fmt.Errorf("%s: %w", fault, err)
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return noHeal, fmt.Errorf("%s: network closed: %w", fault, net.ErrClosed)
	}
	var undos []func() error
	fail := func(l *Link, err error) (Heal, error) {
		_, uerr := undoAll(undos)
		return noHeal, errors.Join(fmt.Errorf("%s link %s: %w", fault, l.name, err), uerr)
	}
	for _, l := range links {
		for _, apply := range actions {
			if err := ctx.Err(); err != nil {
				return fail(l, err)
			}
			undo, err := apply(l)
			if err != nil {
				return fail(l, err)
			}
			undos = append(undos, func() error {
				if err := undo(); err != nil {
					return fmt.Errorf("heal %s link %s: %w", fault, l.name, err)
				}
				return nil
			})
		}
	}
	return n.heal(undos), nil
}

// heal returns the Heal of a fault. An undo that fails stays pending, so calling
// Heal again retries it; one that succeeded is never run twice.
func (n *Proxy) heal(undos []func() error) Heal {
	var mu sync.Mutex
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		n.mu.RLock()
		defer n.mu.RUnlock()
		if n.closed {
			// Close deleted the proxies and every fault with them.
			undos = nil
			return nil
		}
		var err error
		undos, err = undoAll(undos)
		return err
	}
}

// undoAll runs the undos newest first, so a link goes back through the states it
// went through, and returns those that failed.
func undoAll(undos []func() error) (failed []func() error, err error) {
	var errs []error
	for i := len(undos) - 1; i >= 0; i-- {
		if err := undos[i](); err != nil {
			failed = append([]func() error{undos[i]}, failed...)
			errs = append(errs, err)
		}
	}
	return failed, errors.Join(errs...)
}

// own checks that the fault has links, all of this Network, and drops repeats:
// a fault acts on a link once however often it is named.
func (n *Proxy) own(links []*Link) ([]*Link, error) {
	if len(links) == 0 {
		return nil, errors.New("no links")
	}
	seen := make(map[*Link]bool, len(links))
	var out []*Link
	for _, l := range links {
		switch {
		case l == nil:
			return nil, errors.New("nil link")
		case l.net != n:
			return nil, fmt.Errorf("link %s belongs to another network", l.name)
		case !seen[l]:
			seen[l] = true
			out = append(out, l)
		}
	}
	return out, nil
}

// cut takes the link down unless another Cut already holds it down.
func (l *Link) cut() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cuts == 0 {
		l.down()
	}
	l.cuts++
	return nil
}

// uncut brings the link back up when the last Cut on it is healed.
func (l *Link) uncut() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cuts == 1 {
		if err := l.up(); err != nil {
			return err
		}
	}
	l.cuts--
	return nil
}

// isNotFound reports whether the API answered 404: the proxy is already gone.
func isNotFound(err error) bool {
	var apiErr *toxiproxyclient.ApiError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// validName reports whether name can be used as is in the API's URL paths.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}
