package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
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

	// OnDeny, if set, is called with every refusal as it happens, from the
	// goroutine serving the refused connection (it must not block long).
	OnDeny func(Denial)

	// MaxDenials bounds how many refusals [Proxy.Denied] keeps; later ones
	// are counted by [Proxy.Dropped] (and still passed to OnDeny). Default
	// 1000.
	MaxDenials int

	// MaxConns bounds the connections served at once from inside the
	// sandbox (each costs the caller up to two descriptors); when reached,
	// the proxy stops accepting until one ends. Default 256.
	MaxConns int

	// HandshakeTimeout bounds how long a connection may take to send its
	// request (and, on a kept-alive HTTP connection, the next one). Relays
	// and responses have no timeout. Default 30 s.
	HandshakeTimeout time.Duration
}

// Proxy serves HTTP proxy requests (CONNECT and absolute-URI requests) and
// SOCKS5 on the listeners given to [Proxy.Serve], for one sandbox with one
// allowlist. A Proxy is safe for concurrent use; make one per sandbox.
type Proxy struct {
	allow     *Allowlist
	resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	dial      func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	handshake time.Duration
	sem       chan struct{}
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
		handshake: o.HandshakeTimeout,
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
	}
	p.denials.max, p.denials.notify = o.MaxDenials, o.OnDeny
	if p.denials.max <= 0 {
		p.denials.max = 1000
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 256
	}
	p.sem = make(chan struct{}, o.MaxConns)
	if p.handshake <= 0 {
		p.handshake = 30 * time.Second
	}
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
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Denied returns the refusals recorded so far, oldest first.
func (p *Proxy) Denied() []Denial {
	p.denials.mu.Lock()
	defer p.denials.mu.Unlock()
	return append([]Denial(nil), p.denials.list...)
}

// Dropped returns how many refusals were not kept by Denied because
// MaxDenials was reached.
func (p *Proxy) Dropped() int {
	p.denials.mu.Lock()
	defer p.denials.mu.Unlock()
	return p.denials.dropped
}

func (p *Proxy) deny(d Denial) {
	d.Time = time.Now()
	d.Host, d.Detail = printable(d.Host, 255), printable(d.Detail, 1024)
	p.denials.add(d)
}

// printable makes text from a confined program safe to log or print on a
// terminal (sandbox run --explain): control characters and invalid UTF-8
// become '?', and the text is cut at max bytes.
func printable(s string, max int) string {
	if len(s) > max {
		s = s[:max]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}

// Serve accepts connections on l and serves each until it ends or the
// proxy is closed. The proxy owns l from here on and closes it. Serve
// returns ErrClosed after Close, or the listener's error if it fails for
// good. Serve may be called for several listeners (127.0.0.1 and ::1).
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.listeners[l] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.listeners, l)
		p.mu.Unlock()
		l.Close()
	}()

	backoff := 5 * time.Millisecond
	for {
		select {
		case p.sem <- struct{}{}:
		case <-p.ctx.Done():
			return ErrClosed
		}
		c, err := l.Accept()
		if err != nil {
			<-p.sem
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
		if !p.track(c) {
			<-p.sem
			return ErrClosed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-p.sem }()
			defer p.untrack(c)
			p.serveConn(c)
		}()
	}
}

func retryAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.ECONNABORTED)
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

// serveConn tells SOCKS5 (first byte 5) from HTTP and serves c.
func (p *Proxy) serveConn(c net.Conn) {
	if tc, ok := c.(transparentConn); ok {
		p.serveTransparent(tc)
		return
	}
	c.SetReadDeadline(time.Now().Add(p.handshake))
	lr := &io.LimitedReader{R: c, N: maxHeader}
	br := bufio.NewReader(lr)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	switch first[0] {
	case 5:
		p.serveSOCKS(c, br)
	case 4:
		p.deny(Denial{Protocol: "socks4", Reason: ReasonUnsupported, Detail: "SOCKS4 is not served; use SOCKS5 or HTTP"})
		c.Write([]byte{0, 0x5b, 0, 0, 0, 0, 0, 0}) // SOCKS4 "request rejected"
	default:
		p.serveHTTP(c, br, lr)
	}
}

// maxHeader bounds what a request may send before its body: an HTTP
// request line and headers, or a SOCKS5 greeting and request.
const maxHeader = 1 << 20

// dialChecked checks host:port against the allowlist, resolves an allowed
// name, drops every address the allowlist does not allow, and connects to
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
	addrs := m.Addrs
	if addrs == nil {
		var err error
		addrs, err = p.resolve(ctx, m.Host)
		if err != nil {
			return nil, nil, fmt.Errorf("resolve %s: %w", m.Host, err)
		}
		if len(addrs) == 0 {
			return nil, nil, &net.DNSError{Err: "no addresses", Name: m.Host, IsNotFound: true}
		}
	}
	var ok []netip.Addr
	why := ""
	for _, a := range addrs {
		if allowed, w := p.allow.AddrAllowed(a, port); allowed {
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
