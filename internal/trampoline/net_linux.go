//go:build linux

package trampoline

// The network step of the namespace step: the child's half of the egress
// proxy handoff (see internal/egress's package doc, "The namespace, and
// what the child half must do"). System calls only, like the rest of the
// trampoline.

import (
	"syscall"
	"unsafe"
)

const (
	siocGIFFLAGS = 0x8913 // SIOCGIFFLAGS
	siocSIFFLAGS = 0x8914 // SIOCSIFFLAGS
	siocGIFINDEX = 0x8933 // SIOCGIFINDEX
	iffUp        = 0x1    // IFF_UP
	listenQueue  = 4096   // the kernel caps it at net.core.somaxconn
	handoffTag   = 'L'    // internal/egress's handoffTag: the one data byte of the handoff
	poolTag      = 'I'    // internal/egress's tagPool
)

// ifreqFlags is struct ifreq as SIOCGIFFLAGS and SIOCSIFFLAGS use it: the
// interface name, then ifr_flags (a short) at the start of a 24-byte
// union (40 bytes on every 64-bit architecture).
type ifreqFlags struct {
	name  [16]byte
	flags uint16
	_     [22]byte
}

// netStep runs in the child, in its new network namespace, after the
// namespace step made it and before Landlock: it brings the loopback
// interface up (a new network namespace has lo down, so even 127.0.0.1 is
// unreachable), listens on 127.0.0.1:n.Port (the proxy), and passes the
// listener to the parent over n.FD (an inherited AF_UNIX socket, the
// child's end of egress.SocketPair) with SCM_RIGHTS. With n.Transparent it
// then makes every address local (transparentStep) and hands over one
// listener per port and the resolver's socket. With n.Pool it then hands
// over that many unbound, unconnected TCP sockets (poolStep). Then it
// closes the channel:
// the target holds none of these. The parent serves them from outside the
// sandbox; nothing of ours runs inside once the target starts. No
// acknowledgement is awaited: connections queue in a listener's backlog
// (and datagrams in the resolver socket's buffer) from then on, whether
// the parent reads them yet or not.
//
// It needs CAP_NET_ADMIN over the namespace (root, or the owner of the user
// namespace the network namespace was made in) for SIOCSIFFLAGS and the
// routes, and CAP_NET_BIND_SERVICE there for port 53 (the same owner has
// both). It refuses to run where lo is up already (see loopbackUp), so it
// never touches, or listens in, the caller's namespace.
func netStep(n NetStep) (Failure, bool) {
	lo, f, ok := loopbackUp()
	if !ok {
		return f, false
	}
	if len(n.Transparent) > 0 {
		if f, ok := localRoutes(lo); !ok {
			return f, false
		}
	}
	l, f, ok := listenLoopback(n.Port)
	if !ok {
		return f, false
	}
	if f, ok := handOver(n.FD, l, handoffTag); !ok {
		return f, false
	}
	if len(n.Transparent) > 0 {
		if f, ok := transparentStep(n.FD, n.Transparent); !ok {
			return f, false
		}
	}
	if f, ok := poolStep(n.FD, n.Pool); !ok {
		return f, false
	}
	if e := closeFD(n.FD); e != 0 {
		return Failure{Step: "close", Errno: e, Detail: "(egress handoff socket)"}, false
	}
	return Failure{}, true
}

// poolStep makes n AF_INET TCP sockets in the namespace, neither bound
// nor connected, and hands each over with tag 'I': the inbound pool. The
// caller connects each, at most once, to a port the program listens on
// (127.0.0.1:PORT in this namespace) for one connection from its own
// loopback. The sockets are the caller's: the target never holds one.
func poolStep(sock int, n uint32) (Failure, bool) {
	for range n {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return Failure{Step: "socket", Errno: errnoOf(err), Detail: "(inbound pool)"}, false
		}
		if f, ok := handOver(sock, fd, poolTag); !ok {
			return f, false
		}
	}
	return Failure{}, true
}

// handOver sends fd over sock (SEQPACKET: one message, one data byte, the
// tag, and one descriptor) and closes it: the parent holds it now (the
// message holds a reference until it is received).
func handOver(sock, fd int, tag byte) (Failure, bool) {
	rights := syscall.UnixRights(fd)
	if err := syscall.Sendmsg(sock, []byte{tag}, rights, nil, 0); err != nil {
		syscall.Close(fd)
		return Failure{Step: "sendmsg", Errno: errnoOf(err), Detail: "(egress listener handoff)"}, false
	}
	if e := closeFD(fd); e != 0 {
		return Failure{Step: "close", Errno: e, Detail: "(egress listener)"}, false
	}
	return Failure{}, true
}

// loopbackUp sets IFF_UP on "lo" of the calling thread's network namespace,
// through a throwaway datagram socket, as ip-link(8) does, and returns its
// interface index. It refuses a namespace whose lo is up already: never a
// new one.
func loopbackUp() (int32, Failure, bool) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, Failure{Step: "socket", Errno: errnoOf(err), Detail: "(to bring lo up)"}, false
	}
	defer closeFD(fd)
	var ifr ifreqFlags
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), siocGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return 0, Failure{Step: "ioctl(SIOCGIFFLAGS)", Errno: e, Detail: "lo"}, false
	}
	if ifr.flags&iffUp != 0 {
		// A new network namespace has lo down. Up means this is not
		// the namespace the parent asked for (cmd.SysProcAttr replaced
		// after WrapCommand): a listener here would serve the proxy on
		// the host's loopback, and Landlock's rule for the proxy's
		// port would let the program reach that port on every host.
		return 0, Failure{Step: "network step", Detail: "lo is already up: not a new network namespace (was cmd.SysProcAttr replaced after WrapCommand?)"}, false
	}
	ifr.flags |= iffUp
	if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), siocSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return 0, Failure{Step: "ioctl(SIOCSIFFLAGS)", Errno: e, Detail: "lo up"}, false
	}
	// SIOCGIFINDEX writes ifr_ifindex, an int, where the flags were.
	if _, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), siocGIFINDEX, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return 0, Failure{Step: "ioctl(SIOCGIFINDEX)", Errno: e, Detail: "lo"}, false
	}
	return *(*int32)(unsafe.Pointer(&ifr.flags)), Failure{}, true
}

// listenLoopback returns a TCP socket listening on 127.0.0.1:port,
// close-on-exec.
func listenLoopback(port uint16) (int, Failure, bool) {
	// The wrappers, not raw system calls: 386 multiplexes them through
	// socketcall.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, Failure{Step: "socket", Errno: errnoOf(err), Detail: "(egress listener)"}, false
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		closeFD(fd)
		return -1, Failure{Step: "bind", Errno: errnoOf(err), Detail: "127.0.0.1:" + itoa(int(port)) + " (egress listener)"}, false
	}
	if err := syscall.Listen(fd, listenQueue); err != nil {
		closeFD(fd)
		return -1, Failure{Step: "listen", Errno: errnoOf(err), Detail: "(egress listener)"}, false
	}
	return fd, Failure{}, true
}

// closeFD closes fd. EINTR is not retried: on Linux the descriptor is
// gone whatever close answers.
func closeFD(fd int) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
	if e == syscall.EINTR {
		return 0
	}
	return e
}
