//go:build linux

package egress

// The inbound pool's handoff: what the caller accepts as a pool socket.

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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
