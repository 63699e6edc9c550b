//go:build linux

package egress

import (
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// LoopbackUp brings the loopback interface "lo" up in the network
// namespace of the calling thread (a new network namespace starts with lo
// down, so even 127.0.0.1 is unreachable). It is what the child half does
// right after entering the namespace: SIOCGIFFLAGS, then SIOCSIFFLAGS with
// IFF_UP, on a throwaway AF_INET datagram socket. It needs CAP_NET_ADMIN
// over the namespace: root, or the owner of the user namespace the network
// namespace was made in. An interface that is already up is left alone.
//
// In a Go program the namespace is per thread: call it on a thread locked
// (runtime.LockOSThread) in the namespace, or in a process born in it.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("egress: loopback up: socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("egress: loopback up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("egress: loopback up: SIOCGIFFLAGS: %w", err)
	}
	flags := ifr.Uint16()
	if flags&unix.IFF_UP != 0 {
		return nil
	}
	ifr.SetUint16(flags | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("egress: loopback up: SIOCSIFFLAGS: %w", err)
	}
	return nil
}

// SocketPair makes the channel the listener is handed over on: an AF_UNIX
// SOCK_SEQPACKET pair, close-on-exec. Give child to the child half (for
// example as exec.Cmd.ExtraFiles[0]); close it in the parent right after
// the child has started, so that a child that dies before sending makes
// [ReceiveListener] return instead of waiting for its timeout.
func SocketPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "egress-parent"), os.NewFile(uintptr(fds[1]), "egress-child"), nil
}

// handoffTag is the one data byte that goes with the descriptor: a
// SEQPACKET message must carry data, and the tag tells a stray message
// from the handoff.
const handoffTag = 'L'

// SendListener passes the listening socket lfd over the unix socket sock
// (the child's end of [SocketPair]) with SCM_RIGHTS: one message, one data
// byte, one descriptor. The sender still holds lfd afterwards and should
// close it before the target starts: the target has no business with it.
func SendListener(sock, lfd int) error {
	rights := unix.UnixRights(lfd)
	if err := unix.Sendmsg(sock, []byte{handoffTag}, rights, nil, 0); err != nil {
		return fmt.Errorf("egress: send listener: %w", err)
	}
	return nil
}

// ReceiveListener waits (at most timeout) for the listener the child
// sends over sock (the parent's end of [SocketPair]) and returns it as a
// net.Listener ready for [Proxy.Serve]. It refuses anything but a listening
// TCP socket bound to a loopback address, closes any extra descriptor sent
// with it, and never leaves one open on error. The received descriptor is
// close-on-exec in the caller.
func ReceiveListener(sock *os.File, timeout time.Duration) (net.Listener, error) {
	h, err := ReceiveSockets(sock, timeout, nil, 0)
	if err != nil {
		return nil, err
	}
	return h.Proxy, nil
}

// checkLoopbackListener checks that fd is a listening TCP socket bound to
// a loopback address: the only thing the child half may hand over.
func checkLoopbackListener(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fmt.Errorf("not a socket: %w", err)
	}
	proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return err
	}
	listening, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil {
		return err
	}
	// MPTCP is TCP to a client that does not ask for more (Go listens with
	// it by default since 1.24).
	if typ != unix.SOCK_STREAM || (proto != unix.IPPROTO_TCP && proto != unix.IPPROTO_MPTCP) || listening != 1 {
		return fmt.Errorf("not a listening TCP socket (type %d, protocol %d, listening %d)", typ, proto, listening)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		if a.Addr[0] == 127 {
			return nil
		}
	case *unix.SockaddrInet6:
		if a.Addr == [16]byte{15: 1} {
			return nil
		}
	}
	return fmt.Errorf("listener not bound to a loopback address")
}
