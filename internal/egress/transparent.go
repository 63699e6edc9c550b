package egress

// The transparent relay: connections the program made with a plain
// connect() to an address and port, which the namespace's routes delivered
// to a listener the child half handed to the caller (see the package doc,
// "The transparent path"). The caller decides each one by the address the
// program dialled, the accepted socket's local address.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

const (
	// addrMemory is how long an address an allowed name resolved to (for
	// the resolver's answer or for a connection) keeps identifying that
	// name: programs keep a DNS answer past its TTL, and a name's
	// addresses rotate.
	addrMemory = 10 * time.Minute
	// maxAddrsPerName bounds what the caller remembers per name.
	maxAddrsPerName = 64
	// relookupAfter is how often at most a connection to an address no
	// allowed name is known to resolve to makes the caller resolve a name
	// again: a program dialling random addresses on an allowed port costs
	// the caller at most one lookup per name and interval.
	relookupAfter = 2 * time.Second
)

// ServeTransparent serves l, a listener of the transparent path (a socket
// on the wildcard address and an allowed port, in the program's namespace,
// where every address is local): each connection's local address is the
// address and port the program dialled. It is relayed when that is
//
//   - an IP literal rule's address and port, or an address in an address
//     range rule ("10.0.0.0/8") on its port: to exactly that address;
//   - 127.0.0.1 or ::1 on the port of a "localhost" rule: to localhost,
//     both loopback addresses tried in turn (a program that resolved
//     "localhost" to ::1 still reaches a server that listens on
//     127.0.0.1 only);
//   - an address an allowed name on that port resolves to, in the
//     caller's resolver (the answer the program's resolver got from
//     [Proxy.ServeDNS], or a name the program resolved itself, from
//     /etc/hosts): to that name, resolved again and checked as a proxy
//     request is (no DNS rebinding to the caller's own or internal
//     addresses).
//
// Everything else is refused (the connection is reset: the program's
// connect() has succeeded by then, its first read or write fails with
// ECONNRESET) and recorded as a [Denial] with Protocol "tcp" and the
// dialled address as Host. It shares the proxy's bounds: Options.MaxConns
// connections at once with the proxy's own, a relay buffer of 32 KiB per
// direction (io.Copy's), and Options.HandshakeTimeout for the dial.
// Like Serve, it owns and closes l, and returns ErrClosed after Close.
func (p *Proxy) ServeTransparent(l net.Listener) error {
	return p.Serve(transparentListener{l})
}

// transparentListener marks the connections of a transparent listener
// for serveConn.
type transparentListener struct{ net.Listener }

func (l transparentListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return transparentConn{c}, nil
}

type transparentConn struct{ net.Conn }

// serveTransparent decides and relays one connection; one accepted past
// MaxConns (admitted false) is reset and reported (ReasonBusy).
func (p *Proxy) serveTransparent(tc transparentConn, admitted bool) {
	c := tc.Conn
	dst, ok := addrPortOf(c.LocalAddr())
	if !ok {
		return
	}
	if !admitted {
		p.deny(Denial{Protocol: "tcp", Host: dst.Addr().String(), Port: dst.Port(), Reason: ReasonBusy,
			Detail: fmt.Sprintf("%d connections of this sandbox are open already (the proxy's limit)", cap(p.sem))})
		reset(c)
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.handshake)
	host, detail := p.transparentHost(ctx, dst)
	if host == "" {
		cancel()
		p.deny(Denial{Protocol: "tcp", Host: dst.Addr().String(), Port: dst.Port(), Reason: ReasonNotAllowed, Detail: detail})
		reset(c)
		return
	}
	u, d, err := p.dialChecked(ctx, "tcp", host, dst.Port())
	cancel()
	if d != nil || err != nil {
		reset(c)
		return
	}
	defer p.untrack(u)
	relay(c, u)
}

// transparentHost names the rule a connection to dst is relayed by: an IP
// literal (the dialled address itself, when a literal or range rule names
// it), "localhost", or an allowed name; "" and why not when none.
func (p *Proxy) transparentHost(ctx context.Context, dst netip.AddrPort) (host, detail string) {
	addr, port := dst.Addr(), dst.Port()
	if p.allow.addrNamed(addr, port) {
		return addr.String(), ""
	}
	if (addr == loopback4 || addr == loopback6) && p.allow.localhostOn(port) {
		return "localhost", ""
	}
	for _, name := range p.allow.namesOn(port) {
		if p.names.resolvesTo(ctx, p.resolve, name, addr) {
			return name, ""
		}
	}
	return "", fmt.Sprintf("%s: no rule names this address, and no allowed name on port %d is known to resolve to it",
		joinHostPort(addr.String(), port), port)
}

// namesOn returns the exact DNS names of the rules on port, and of the
// any-port rules, sorted. Wildcard rules are not served transparently:
// their names cannot be listed (sandbox.ParseEndpoint refuses them anyway).
func (a *Allowlist) namesOn(port uint16) []string {
	var out []string
	for r := range a.names {
		if r.Port == port {
			out = append(out, r.Host)
		}
	}
	for name := range a.namesAny {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// hostPorts returns the ports of the rules whose host is name ("localhost"
// or a DNS name; none for anything else), and whether an any-port rule
// names it: the resolver answers for those.
func (a *Allowlist) hostPorts(name string) (out []uint16, anyPort bool) {
	anyPort = a.namesAny[name] || name == "localhost" && a.localhostAny
	if name == "localhost" {
		for port := range a.localhost {
			out = append(out, port)
		}
	}
	for r := range a.names {
		if r.Host == name {
			out = append(out, r.Port)
		}
	}
	slices.Sort(out)
	return out, anyPort
}

func addrPortOf(a net.Addr) (netip.AddrPort, bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := ta.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
}

// reset closes c with an RST (SO_LINGER 0): the program learns at once
// that the connection is gone, rather than reading an orderly end.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// nameAddrs remembers, per allowed name, the addresses the caller's
// resolver gave for it and when: the transparent relay identifies a name
// by them.
type nameAddrs struct {
	mu sync.Mutex
	m  map[string]*nameEntry
}

type nameEntry struct {
	seen     map[netip.Addr]time.Time
	resolved time.Time // the last lookup started

	// The resolver's last lookup of the name, reused for dnsTTL.
	answer   []netip.Addr
	answered time.Time
}

// lastAnswer returns the caller's lookup of name made for a DNS answer
// less than dnsTTL seconds ago.
func (n *nameAddrs) lastAnswer(name string) ([]netip.Addr, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.entry(name)
	if e.answered.IsZero() || time.Since(e.answered) >= dnsTTL*time.Second {
		return nil, false
	}
	return slices.Clone(e.answer), true
}

// setAnswer records the caller's lookup of name for lastAnswer.
func (n *nameAddrs) setAnswer(name string, addrs []netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.entry(name)
	e.answer, e.answered = slices.Clone(addrs[:min(len(addrs), maxAddrsPerName)]), time.Now()
}

// record notes addrs for name, now.
func (n *nameAddrs) record(name string, addrs []netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.entry(name)
	now := time.Now()
	for _, a := range addrs {
		e.seen[a.Unmap()] = now
	}
	for a, t := range e.seen {
		if now.Sub(t) > addrMemory {
			delete(e.seen, a)
		}
	}
	for len(e.seen) > maxAddrsPerName {
		var oldest netip.Addr
		var ot time.Time
		for a, t := range e.seen {
			if !oldest.IsValid() || t.Before(ot) {
				oldest, ot = a, t
			}
		}
		delete(e.seen, oldest)
	}
}

func (n *nameAddrs) entry(name string) *nameEntry {
	if n.m == nil {
		n.m = map[string]*nameEntry{}
	}
	e := n.m[name]
	if e == nil {
		e = &nameEntry{seen: map[netip.Addr]time.Time{}}
		n.m[name] = e
	}
	return e
}

// known reports whether name resolved to addr within addrMemory, and
// whether a new lookup is due (none started within relookupAfter; it then
// counts as started).
func (n *nameAddrs) known(name string, addr netip.Addr) (found, lookup bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.entry(name)
	if t, ok := e.seen[addr]; ok && time.Since(t) <= addrMemory {
		return true, false
	}
	if time.Since(e.resolved) < relookupAfter {
		return false, false
	}
	e.resolved = time.Now()
	return false, true
}

// resolvesTo reports whether the allowed name resolves to addr: from
// memory, or by one lookup if one is due.
func (n *nameAddrs) resolvesTo(ctx context.Context, resolve func(context.Context, string) ([]netip.Addr, error), name string, addr netip.Addr) bool {
	found, lookup := n.known(name, addr)
	if found || !lookup {
		return found
	}
	addrs, err := resolve(ctx, name)
	if err != nil {
		return false
	}
	n.record(name, addrs)
	found, _ = n.known(name, addr)
	return found
}
