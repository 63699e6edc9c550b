package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeNet is the test's view of the caller's network. Names resolve to
// addresses in 203.0.113.0/24 (a documentation range, public to Class),
// and the dial hook connects such an address to a real loopback server
// instead. Tests send nothing outside 127.0.0.0/8 and ::1: a dial to any
// address that is neither mapped nor loopback fails the test and sends
// nothing.
type fakeNet struct {
	t     testing.TB
	mu    sync.Mutex
	names map[string][]netip.Addr
	route map[netip.AddrPort]string // fake address → real loopback host:port
	next  byte
	dials atomic.Int64
}

func newFakeNet(t testing.TB) *fakeNet {
	return &fakeNet{t: t, names: map[string][]netip.Addr{}, route: map[netip.AddrPort]string{}, next: 1}
}

// host makes name resolve to a fresh fake public address whose port
// (the port of real) leads to the loopback server at real.
func (f *fakeNet) host(name string, real string) (port uint16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ps, err := net.SplitHostPort(real)
	if err != nil {
		f.t.Fatal(err)
	}
	n, _ := strconv.Atoi(ps)
	a := netip.AddrFrom4([4]byte{203, 0, 113, f.next})
	f.next++
	f.names[name] = append(f.names[name], a)
	f.route[netip.AddrPortFrom(a, uint16(n))] = real
	return uint16(n)
}

// alias makes name resolve to the given addresses as they are (for
// rebinding tests: a name that resolves to 127.0.0.1).
func (f *fakeNet) alias(name string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range addrs {
		f.names[name] = append(f.names[name], netip.MustParseAddr(a))
	}
}

func (f *fakeNet) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeNet) dial(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	f.mu.Lock()
	real, ok := f.route[a]
	f.mu.Unlock()
	f.dials.Add(1)
	switch {
	case ok:
	case a.Addr().Unmap().IsLoopback():
		real = a.String()
	default:
		f.t.Errorf("proxy dialled %s, outside the test's network: nothing was sent", a)
		return nil, fmt.Errorf("test network: %s is not reachable", a)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", real)
}

// startProxy serves a proxy with rules on a loopback listener and closes it
// at the end of the test.
func startProxy(t testing.TB, f *fakeNet, rules ...Rule) (*Proxy, string) {
	t.Helper()
	a, err := NewAllowlist(rules)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Allow: a, Resolve: f.resolve, Dial: f.dial})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(l) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != ErrClosed {
			t.Errorf("Serve returned %v after Close, want ErrClosed", err)
		}
	})
	return p, l.Addr().String()
}

// countingListener counts the connections a test server accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
