//go:build linux

package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// The tags of the handoff's messages (the one data byte of each; see
// [ReceiveSockets]). The child halves (internal/trampoline's net_linux.go
// and transparent_linux.go, internal/spawnhelper's helper.c) send the same.
const (
	tagTransparent = 'T' // a listener on [::]:PORT, one per allowed port
	tagResolver    = 'U' // the UDP socket on [::]:53
	tagPool        = 'I' // an unbound, unconnected TCP socket: the inbound pool
)

// ResolverPort is the port of the resolver socket the child half makes.
const ResolverPort = 53

// Handoff is what the child half of a sandbox hands its caller before the
// target starts: the proxy's listener and, for the transparent path, one
// listener per allowed port and the resolver's socket; for inbound
// connections from a caller that cannot enter the namespace, a pool of
// TCP sockets made in it (see [NewPool]).
type Handoff struct {
	Proxy       net.Listener
	Transparent []net.Listener // in the order of the ports asked for
	Resolver    net.PacketConn // nil without the transparent path
	Pool        []*os.File     // AF_INET TCP sockets, neither bound nor connected
}

// Close closes every socket of h.
func (h *Handoff) Close() {
	if h.Proxy != nil {
		h.Proxy.Close()
	}
	for _, l := range h.Transparent {
		l.Close()
	}
	if h.Resolver != nil {
		h.Resolver.Close()
	}
	for _, f := range h.Pool {
		f.Close()
	}
}

// ReceiveSockets waits (at most timeout) for everything the child half
// sends over sock (the parent's end of [SocketPair]) when its network step
// was asked for the transparent path on ports and for an inbound pool of
// pool sockets: the proxy's listener (as [ReceiveListener] checks it),
// then, with ports, a listening TCP socket bound to the wildcard address
// and ports[i] for each port and a UDP socket bound to the wildcard
// address and port 53, then pool AF_INET TCP sockets, each neither bound,
// listening nor connected (checkPoolSocket). Anything else (a tag out of
// order, a socket of another kind or address, a missing message) is an
// error, and every descriptor received so far is closed. With no ports
// and no pool it receives the proxy's listener alone ([ReceiveListener]).
func ReceiveSockets(sock *os.File, timeout time.Duration, ports []uint16, pool int) (*Handoff, error) {
	c, err := net.FileConn(sock)
	if err != nil {
		return nil, fmt.Errorf("egress: receive sockets: %w", err)
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("egress: receive sockets: not a unix socket")
	}
	uc.SetReadDeadline(time.Now().Add(timeout))
	h := &Handoff{}
	fail := func(err error) (*Handoff, error) {
		h.Close()
		return nil, fmt.Errorf("egress: receive sockets: %w", err)
	}
	fd, err := receiveOne(uc, handoffTag, checkLoopbackListener)
	if err != nil {
		return fail(err)
	}
	if h.Proxy, err = fileListener(fd); err != nil {
		return fail(err)
	}
	if err := receiveTransparent(uc, h, ports); err != nil {
		return fail(err)
	}
	for range pool {
		fd, err := receiveOne(uc, tagPool, checkPoolSocket)
		if err != nil {
			return fail(err)
		}
		h.Pool = append(h.Pool, os.NewFile(uintptr(fd), "egress-inbound-pool"))
	}
	return h, nil
}

// receiveTransparent receives into h the transparent path's sockets for
// ports (none without ports).
func receiveTransparent(uc *net.UnixConn, h *Handoff, ports []uint16) error {
	if len(ports) == 0 {
		return nil
	}
	for _, port := range ports {
		fd, err := receiveOne(uc, tagTransparent, func(fd int) error { return checkWildcard(fd, unix.SOCK_STREAM, port) })
		if err != nil {
			return err
		}
		l, err := fileListener(fd)
		if err != nil {
			return err
		}
		h.Transparent = append(h.Transparent, l)
	}
	fd, err := receiveOne(uc, tagResolver, func(fd int) error { return checkWildcard(fd, unix.SOCK_DGRAM, ResolverPort) })
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "egress-resolver")
	pc, err := net.FilePacketConn(f) // dups fd
	f.Close()
	if err != nil {
		return err
	}
	h.Resolver = pc
	return nil
}

// receiveOne reads one handoff message, which must carry tag and exactly
// one descriptor that passes check; it returns it close-on-exec, and
// closes every descriptor of a message it refuses.
func receiveOne(uc *net.UnixConn, tag byte, check func(fd int) error) (int, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := uc.ReadMsgUnix(buf, oob)
	if errors.Is(err, io.EOF) {
		n, oobn, err = 0, 0, nil
	}
	if err != nil {
		return -1, err
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return -1, err
		}
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd) // ReadMsgUnix asks for MSG_CMSG_CLOEXEC; make sure
	}
	bad := func(format string, a ...any) (int, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf(format, a...)
	}
	switch {
	case n == 0 && oobn == 0:
		return bad("the child closed its end without sending its %q socket", tag)
	case n != 1 || buf[0] != tag:
		return bad("unexpected message (want tag %q)", tag)
	case flags&unix.MSG_CTRUNC != 0:
		return bad("control message truncated (too many descriptors)")
	case len(fds) != 1:
		return bad("%d descriptors, want 1", len(fds))
	}
	if err := check(fds[0]); err != nil {
		return bad("%q socket: %w", tag, err)
	}
	return fds[0], nil
}

// checkWildcard checks that fd is a socket of type typ (a listening TCP
// socket, or a UDP socket) bound to the IPv6 wildcard address and port.
func checkWildcard(fd, typ int, port uint16) error {
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fmt.Errorf("not a socket: %w", err)
	}
	proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return err
	}
	want := unix.IPPROTO_UDP
	if typ == unix.SOCK_STREAM {
		want = unix.IPPROTO_TCP
		if l, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || l != 1 {
			return fmt.Errorf("not listening (%v)", err)
		}
	}
	if got != typ || proto != want {
		return fmt.Errorf("type %d, protocol %d; want %d, %d", got, proto, typ, want)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	if a, ok := sa.(*unix.SockaddrInet6); !ok || a.Addr != [16]byte{} || a.Port != int(port) {
		return fmt.Errorf("not bound to [::]:%d", port)
	}
	return nil
}

// checkPoolSocket checks that fd is what the inbound pool is made of: an
// AF_INET TCP socket (not MPTCP: the relay needs nothing more) that is not
// listening, bound to no address or port, and connected to nothing, so
// that the caller's connect decides where it goes. That it was made in
// the program's namespace, not the caller's, rests on the child half,
// which refuses to run its network step where lo is up already.
func checkPoolSocket(fd int) error {
	var v [4]int
	for i, opt := range []int{unix.SO_DOMAIN, unix.SO_TYPE, unix.SO_PROTOCOL, unix.SO_ACCEPTCONN} {
		var err error
		if v[i], err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt); err != nil {
			return fmt.Errorf("not a socket: %w", err)
		}
	}
	if v != [4]int{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP, 0} {
		return fmt.Errorf("family %d, type %d, protocol %d, listening %d; want an AF_INET TCP socket, not listening", v[0], v[1], v[2], v[3])
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	if a, ok := sa.(*unix.SockaddrInet4); !ok || a.Port != 0 || a.Addr != [4]byte{} {
		return errors.New("bound to an address")
	}
	if _, err := unix.Getpeername(fd); err != unix.ENOTCONN {
		return fmt.Errorf("connected (getpeername: %v)", err)
	}
	return nil
}

func fileListener(fd int) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), "egress-listener")
	l, err := net.FileListener(f) // dups fd
	f.Close()
	return l, err
}
