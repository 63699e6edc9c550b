//go:build linux

package egress

// The inbound pool without a namespace: the pool's sockets are made in the
// test's own namespace and the "program's port" is a loopback listener of
// the test, so that what the pool does (one socket per connection, a
// refused connect gives it back, an empty pool resets and reports) is
// checked on its own. TestEgressInboundAsNobody runs it for real.

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// poolSocket makes a socket as the child half makes the pool's: AF_INET
// TCP, blocking, unbound, unconnected.
func poolSocket(t *testing.T) *os.File {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fd), "pool")
}

// freePort returns a loopback port with no listener (as far as a listen
// and close can tell).
func freePort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// TestServeInboundPool: a pool of 2 serves exactly two connections; a
// connection made while the program's port has no listener is reset and
// gives its socket back; the third connection is reset and recorded as
// ReasonInboundPool, with the port.
func TestServeInboundPool(t *testing.T) {
	a, err := NewAllowlist([]Rule{{Host: "localhost", Port: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Allow: a})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	front, err := net.Listen("tcp4", "127.0.0.1:0") // the caller's listener
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t) // the program's, not listening yet
	pool := NewPool([]*os.File{poolSocket(t), poolSocket(t)})
	done := make(chan error, 1)
	go func() { done <- p.ServeInboundPool(front, pool, port) }()

	// exchange dials the caller's listener and returns the first line
	// the far end sends, or the error that ends the read.
	exchange := func() (string, error) {
		c, err := net.DialTimeout("tcp4", front.Addr().String(), 5*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		return bufio.NewReader(c).ReadString('\n')
	}
	if got, err := exchange(); err == nil || got != "" {
		t.Errorf("with no listener at the program's port: %q, %v; want the connection ended without data", got, err)
	}
	if n := pool.Len(); n != 2 {
		t.Errorf("after a refused connect: %d sockets left, want 2 (the refused one given back)", n)
	}
	program, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(int(port)))
	if err != nil {
		t.Skipf("the free port was taken meanwhile: %v", err)
	}
	defer program.Close()
	go func() {
		for {
			c, err := program.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("program\n"))
			c.Close()
		}
	}()
	for i := range 2 {
		if got, err := exchange(); got != "program\n" {
			t.Errorf("connection %d: %q, %v; want the program's line", i+1, got, err)
		}
	}
	got, err := exchange()
	var errno syscall.Errno
	if got != "" || !(errors.Is(err, io.EOF) || errors.As(err, &errno) && errno == syscall.ECONNRESET) {
		t.Errorf("connection 3, with the pool used up: %q, %v; want it reset without data", got, err)
	}
	ds := p.Denied()
	if len(ds) != 1 || ds[0].Protocol != "inbound" || ds[0].Reason != ReasonInboundPool || ds[0].Port != port || !strings.Contains(ds[0].Detail, "2 sockets") {
		t.Errorf("denials %+v; want one %s for port %d saying the pool had 2 sockets", ds, ReasonInboundPool, port)
	}
	p.Close()
	select {
	case err := <-done:
		if err != ErrClosed {
			t.Errorf("ServeInboundPool after Close: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeInboundPool did not return after Close")
	}
}

// TestReceivePoolRefuses hands over, where the pool's sockets belong,
// what the child half must never send, and checks that ReceiveSockets
// refuses it and keeps no descriptor.
func TestReceivePoolRefuses(t *testing.T) {
	before := openFDs()
	sendFile := func(s int, tag byte, f *os.File) {
		defer f.Close()
		if err := unix.Sendmsg(s, []byte{tag}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
			t.Error(err)
		}
	}
	sock := func(family, typ int) *os.File {
		fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fd), "s")
	}
	for _, c := range []struct {
		name string
		send func(s int)
		want string
	}{
		{"a good one", func(s int) { sendFile(s, tagPool, sock(unix.AF_INET, unix.SOCK_STREAM)) }, ""},
		{"bound", func(s int) {
			f := sock(unix.AF_INET, unix.SOCK_STREAM)
			if err := unix.Bind(int(f.Fd()), &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				t.Fatal(err)
			}
			sendFile(s, tagPool, f)
		}, "bound to an address"},
		{"listening", func(s int) {
			l, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			f, _ := l.(*net.TCPListener).File()
			l.Close()
			sendFile(s, tagPool, f)
		}, "listening 1"},
		{"connected", func(s int) {
			l, _ := net.Listen("tcp4", "127.0.0.1:0")
			defer l.Close()
			c, err := net.Dial("tcp4", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			f, _ := c.(*net.TCPConn).File()
			sendFile(s, tagPool, f)
		}, "bound to an address"}, // a connected socket is bound to its local address
		{"IPv6", func(s int) { sendFile(s, tagPool, sock(unix.AF_INET6, unix.SOCK_STREAM)) }, "family 10"},
		{"UDP", func(s int) { sendFile(s, tagPool, sock(unix.AF_INET, unix.SOCK_DGRAM)) }, "type 2"},
		{"a unix socket", func(s int) { sendFile(s, tagPool, sock(unix.AF_UNIX, unix.SOCK_STREAM)) }, "family 1"},
		{"another tag", func(s int) { sendFile(s, tagTransparent, sock(unix.AF_INET, unix.SOCK_STREAM)) }, "want tag 'I'"},
		{"none", func(int) {}, "closed its end"},
	} {
		parent, child, err := SocketPair()
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp4", "127.0.0.1:0") // the proxy's listener, first
		if err != nil {
			t.Fatal(err)
		}
		lf, _ := l.(*net.TCPListener).File()
		l.Close()
		sendFile(int(child.Fd()), handoffTag, lf)
		c.send(int(child.Fd()))
		child.Close()
		h, err := ReceiveSockets(parent, 5*time.Second, nil, 1)
		parent.Close()
		switch {
		case c.want == "" && (err != nil || len(h.Pool) != 1):
			t.Errorf("%s: %v; want it received", c.name, err)
		case c.want == "" && err == nil:
			h.Close()
		case err == nil:
			h.Close()
			t.Errorf("%s: accepted", c.name)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.want)
		}
	}
	if after := openFDs(); after > before {
		t.Errorf("%d socket descriptors open after the refusals, %d before", after, before)
	}
}
