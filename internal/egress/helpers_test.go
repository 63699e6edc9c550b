package egress

import (
	"github.com/openparallax/sandbox/internal/egress/egresstest"
	"net"
	"sync/atomic"
	"testing"
)

// fakeNet is the test's view of the caller's network (egresstest.Net):
// names resolve to fake public addresses, and every connection ends at a
// loopback server of the test.
type fakeNet = egresstest.Net

func newFakeNet(t testing.TB) *fakeNet { return egresstest.NewNet(t) }

// startProxy serves a proxy with rules on a loopback listener and closes it
// at the end of the test.
func startProxy(t testing.TB, f *fakeNet, rules ...Rule) (*Proxy, string) {
	t.Helper()
	a, err := NewAllowlist(rules)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial})
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

// serveTCP listens on a loopback port until the end of the test, runs
// handle on each connection it accepts in a goroutine of its own (closing
// the connection after), and returns the address.
func serveTCP(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return l.Addr().String()
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
