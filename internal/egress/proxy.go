package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Options configure a [Proxy].
type Options struct {
	// Allow decides which host:port requests are served. Required.
	Allow *Allowlist

	// Resolve looks up a DNS name that Allow allowed, in the caller's
	// network. Nil: net.DefaultResolver.LookupNetIP(ctx, "ip", host). Tests
	// set it to map names to addresses without touching /etc/hosts.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	// Dial connects to an address that passed every check. Nil: a TCP
	// net.Dialer with a 30 s timeout. The proxy dials the checked address,
	// never the name, so the answer it checked is the one it uses.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)

	// LocalAddrs lists the addresses of the caller's own network
	// interfaces, asked again for every name the proxy resolves (they
	// change). Nil: [LocalAddrs]. Tests set it to add an address without
	// touching the machine's interfaces. See [Allowlist.AddrAllowedHere].
	LocalAddrs func() ([]netip.Addr, error)

	// OnDeny, if set, is called with every refusal as it happens, from the
	// goroutine serving the refused connection (it must not block long).
	OnDeny func(Denial)

	// MaxDenials bounds how many refusals [Proxy.Denied] keeps; later ones
	// are counted by [Proxy.Dropped] (and still passed to OnDeny). Default
	// 1000.
	MaxDenials int

	// The bounds on what the sandbox may cost the caller; zero means the
	// default. See "Resource bounds" in the package doc.

	// MaxConns bounds the connections served at once. Past it, up to
	// [RefusingConns] more are accepted only to be refused ([ReasonBusy]:
	// HTTP 503, SOCKS5 general failure); past those, the proxy stops
	// accepting until a connection ends, and the rest wait in the
	// listener's backlog, in the kernel. Default [DefaultMaxConns].
	MaxConns int

	// HandshakeTimeout bounds how long a connection may take to send a
	// whole request head: from its start, or from the end of the previous
	// request on a kept-alive HTTP connection. A head begun and not ended
	// in time is refused ([ReasonTimeout], HTTP 408); a connection that
	// sent nothing is closed without a record. Relays and responses have
	// no timeout. Default [DefaultHandshakeTimeout].
	HandshakeTimeout time.Duration

	// MaxHeaderBytes bounds one request head: the HTTP request line and
	// header fields with their line ends, or the SOCKS5 greeting and
	// request. A longer head is refused ([ReasonTooLarge], HTTP 431).
	// Default [DefaultMaxHeaderBytes].
	MaxHeaderBytes int

	// MaxHeaderFields bounds the header lines of one HTTP request: the
	// parsed form of many tiny fields costs far more memory than their
	// bytes. More are refused ([ReasonTooLarge], HTTP 431). Default
	// [DefaultMaxHeaderFields].
	MaxHeaderFields int

	// MaxBufferedBytes bounds the request-head bytes the proxy holds for
	// all connections of the sandbox together: read from a connection and
	// kept until that request has been answered or turned into a relay. A
	// request that would need more is refused ([ReasonBusy], HTTP 503,
	// SOCKS5 general failure). Default [DefaultMaxBufferedBytes].
	MaxBufferedBytes int64
}

// Proxy serves HTTP proxy requests (CONNECT and absolute-URI requests) and
// SOCKS5 on the listeners given to [Proxy.Serve], for one sandbox with one
// allowlist. A Proxy is safe for concurrent use; make one per sandbox.
type Proxy struct {
	allow     *Allowlist
	resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	dial      func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	local     func() ([]netip.Addr, error)
	handshake time.Duration
	maxHead   int64
	maxFields int
	budget    *Budget
	sem       chan struct{} // a slot per connection served
	refusing  chan struct{} // a slot per connection accepted to be refused
	denials   denials
	names     nameAddrs // the transparent path's (transparent.go)

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
}

// orDefault is v, or def when v is zero or negative.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ErrClosed is returned by Serve once the proxy is closed.
var ErrClosed = errors.New("egress: proxy closed")

// New makes a proxy. It serves nothing until [Proxy.Serve] is called.
func New(o Options) (*Proxy, error) {
	if o.Allow == nil {
		return nil, errors.New("egress: Options.Allow is required")
	}
	p := &Proxy{
		allow:     o.Allow,
		resolve:   o.Resolve,
		dial:      o.Dial,
		local:     o.LocalAddrs,
		handshake: orDefault(o.HandshakeTimeout, DefaultHandshakeTimeout),
		maxHead:   int64(orDefault(o.MaxHeaderBytes, DefaultMaxHeaderBytes)),
		maxFields: orDefault(o.MaxHeaderFields, DefaultMaxHeaderFields),
		budget:    NewBudget(orDefault(o.MaxBufferedBytes, DefaultMaxBufferedBytes)),
		sem:       make(chan struct{}, orDefault(o.MaxConns, DefaultMaxConns)),
		refusing:  make(chan struct{}, RefusingConns),
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	p.denials.max, p.denials.notify = orDefault(o.MaxDenials, 1000), o.OnDeny
	if p.resolve == nil {
		p.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if p.dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		p.dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", a.String())
		}
	}
	if p.local == nil {
		p.local = LocalAddrs
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// startServing registers l, which Close then closes, and counts its
// serving loop in p.wg; false (l closed) once the proxy is closed. Every
// loop that serves a listener of the proxy's begins with it and ends with
// stopServing.
func (p *Proxy) startServing(l net.Listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		l.Close()
		return false
	}
	p.listeners[l] = struct{}{}
	p.wg.Add(1)
	return true
}

// stopServing forgets l, closes it and ends the loop's count.
func (p *Proxy) stopServing(l net.Listener) {
	p.mu.Lock()
	delete(p.listeners, l)
	p.mu.Unlock()
	l.Close()
	p.wg.Done()
}

// Serve accepts connections on l and serves each until it ends or the
// proxy is closed. The proxy owns l from here on and closes it. Serve
// returns ErrClosed after Close, or the listener's error if it fails for
// good. Serve may be called for several listeners (127.0.0.1 and ::1).
func (p *Proxy) Serve(l net.Listener) error {
	if !p.startServing(l) {
		return ErrClosed
	}
	defer p.stopServing(l)

	backoff := 5 * time.Millisecond
	for {
		slot, ok := p.acquire()
		if !ok {
			return ErrClosed
		}
		c, err := l.Accept()
		if err != nil {
			<-slot
			if p.ctx.Err() != nil {
				return ErrClosed
			}
			if !retryAccept(err) {
				return fmt.Errorf("egress: accept: %w", err)
			}
			// Out of descriptors or memory: wait for connections to end
			// instead of giving up serving the sandbox.
			select {
			case <-time.After(backoff):
			case <-p.ctx.Done():
				return ErrClosed
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		slot = p.upgrade(slot)
		if !p.track(c) {
			<-slot
			return ErrClosed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			// The slot is free before the client sees its connection
			// end (untrack closes it), so that its next one finds it free.
			defer func() { <-slot }()
			p.serveConn(c, slot == p.sem)
		}()
	}
}

// track registers c so that Close closes it. It closes c and returns false
// when the proxy is already closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// Close stops every listener, ends every connection and relay, and returns
// when every goroutine the proxy started has returned. Denied still answers
// afterwards.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	var closers []io.Closer
	for l := range p.listeners {
		closers = append(closers, l)
	}
	for c := range p.conns {
		closers = append(closers, c)
	}
	p.mu.Unlock()
	p.cancel()
	for _, c := range closers {
		c.Close()
	}
	p.wg.Wait()
	return nil
}

// serveConn tells SOCKS5 (first byte 5) from HTTP and serves c, or, when
// it was accepted past MaxConns (admitted false), reads its request only
// to refuse it with ReasonBusy. A connection of a transparent listener
// (transparent.go) is served there.
//
// Reading is layered: c, then the meter (the per-request head bound and
// the sandbox's byte budget), then a replay of a head already read (see
// readRequest), then one 4 KiB bufio.Reader for the life of c.
func (p *Proxy) serveConn(c net.Conn, admitted bool) {
	if tc, ok := c.(transparentConn); ok {
		p.serveTransparent(tc, admitted)
		return
	}
	c.SetReadDeadline(time.Now().Add(p.handshake))
	m := &meter{r: c, budget: p.budget}
	defer m.release()
	m.startHead(p.maxHead)
	rp := &replay{r: m}
	br := bufio.NewReader(rp)
	first, err := br.Peek(1)
	if err != nil {
		p.refuseHead(c, "", m, err, nil)
		return
	}
	var busy *Denial
	if !admitted {
		busy = &Denial{Reason: ReasonBusy,
			Detail: fmt.Sprintf("%d connections of this sandbox are open already (the proxy's limit)", cap(p.sem))}
	}
	switch first[0] {
	case 5:
		p.serveSOCKS(c, br, m, busy)
	case 4:
		p.deny(Denial{Protocol: "socks4", Reason: ReasonUnsupported, Detail: "SOCKS4 is not served; use SOCKS5 or HTTP"})
		c.Write([]byte{0, 0x5b, 0, 0, 0, 0, 0, 0}) // SOCKS4 "request rejected"
	default:
		p.serveHTTP(c, br, rp, m, busy)
	}
}

// dialChecked checks host:port against the allowlist, resolves an allowed
// name, drops every address the allowlist does not allow (for a name, also
// the caller's own: [Allowlist.AddrAllowedHere]), and connects to
// the first remaining address that answers. A refusal is recorded and
// returned as a Denial; a failure to resolve or connect is an error (the
// destination's answer, not the sandbox's).
func (p *Proxy) dialChecked(ctx context.Context, proto, host string, port uint16) (net.Conn, *Denial, error) {
	m, reason, detail := p.allow.Match(host, port)
	if reason != "" {
		d := Denial{Protocol: proto, Host: host, Port: port, Reason: reason, Detail: detail}
		if canon, _, err := canonicalHost(host); err == nil {
			d.Host = canon
		}
		p.deny(d)
		return nil, &d, nil
	}
	addrs := m.Addrs // pinned by the rule: an IP literal or localhost
	check := p.allow.AddrAllowed
	if addrs == nil {
		var err error
		addrs, err = p.resolve(ctx, m.Host)
		if err != nil {
			return nil, nil, fmt.Errorf("resolve %s: %w", m.Host, err)
		}
		if len(addrs) == 0 {
			return nil, nil, &net.DNSError{Err: "no addresses", Name: m.Host, IsNotFound: true}
		}
		// A name's answer must not lead to the caller's own interfaces
		// either. Fail closed: without the list, no answer passes.
		own, err := p.local()
		if err != nil {
			d := Denial{Protocol: proto, Host: m.Host, Port: port, Reason: ReasonNonPublic,
				Detail: fmt.Sprintf("cannot tell %s's addresses from the caller's own: %v", m.Host, err)}
			p.deny(d)
			return nil, &d, nil
		}
		check = func(a netip.Addr, port uint16) (bool, string) { return p.allow.AddrAllowedHere(a, port, own) }
	}
	var ok []netip.Addr
	why := ""
	for _, a := range addrs {
		if allowed, w := check(a, port); allowed {
			ok = append(ok, a.Unmap())
		} else if why == "" {
			why = w
		}
	}
	if len(ok) == 0 {
		d := Denial{Protocol: proto, Host: m.Host, Port: port, Reason: ReasonNonPublic,
			Detail: fmt.Sprintf("%s resolves only to addresses the allowlist does not allow (%s)", m.Host, why)}
		p.deny(d)
		return nil, &d, nil
	}
	var lastErr error
	for _, a := range ok {
		c, err := p.dial(ctx, netip.AddrPortFrom(a, port))
		if err == nil {
			if !p.track(c) {
				return nil, nil, ErrClosed
			}
			return c, nil, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, nil, lastErr
}

// relay copies both ways between the client c and the destination u until
// both directions end. A direction that ends cleanly half-closes its
// destination (so a client's shutdown(SHUT_WR) reaches the server and the
// answer still flows back); a direction that fails ends both. The caller
// untracks (closes) both afterwards.
func relay(c, u net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(u, c)
	}()
	pipe(c, u)
	<-done
}

func pipe(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if err != nil {
		dst.Close()
		src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	dst.Close()
}
