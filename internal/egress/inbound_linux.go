//go:build linux

package egress

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// maxInbound bounds the inbound connections relayed at once per listener.
const maxInbound = 64

// NamespaceOf returns a descriptor of the network namespace l's socket
// lives in (ioctl SIOCGSKNS, Linux 4.9+; it needs CAP_NET_ADMIN over that
// namespace's user namespace: a root caller has it over the namespaces of
// its sandboxes), close-on-exec.
func NamespaceOf(l net.Listener) (*os.File, error) {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return nil, fmt.Errorf("egress: SIOCGSKNS: not a TCP listener")
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, err
	}
	ns, ierr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { ns, ierr = unix.IoctlRetInt(int(fd), unix.SIOCGSKNS) }); err != nil {
		return nil, err
	}
	if ierr != nil {
		return nil, fmt.Errorf("egress: SIOCGSKNS: %w", ierr)
	}
	unix.CloseOnExec(ns)
	return os.NewFile(uintptr(ns), "netns"), nil
}

// socketIn makes a TCP socket in the network namespace ns: on a thread of
// its own, locked, which enters ns for the socket() call and goes back to
// the caller's namespace; a thread that cannot go back is never unlocked,
// so the runtime ends it with its goroutine instead of reusing it.
func socketIn(ns *os.File) (int, error) {
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{-1, fmt.Errorf("egress: the caller's network namespace: %w", err)}
			return
		}
		defer unix.Close(home)
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{-1, fmt.Errorf("egress: setns into the sandbox's network namespace: %w", err)}
			return
		}
		fd, serr := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
			// Left locked: this thread dies with the goroutine.
			if fd >= 0 {
				unix.Close(fd)
			}
			ch <- result{-1, fmt.Errorf("egress: setns back to the caller's network namespace: %w", err)}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{fd, serr}
	}()
	r := <-ch
	return r.fd, r.err
}

// ServeInbound accepts connections on l, a listener on the caller's side,
// and relays each to 127.0.0.1:port inside the network namespace ns (a
// port the confined program listens on): a socket made in ns for each,
// connected there, at most maxInbound at once. It owns and closes l, and
// returns ErrClosed after Close. What reaches l is the caller's business:
// whoever can connect to it reaches the program's port.
func (p *Proxy) ServeInbound(l net.Listener, ns *os.File, port uint16) error {
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
	defer l.Close()
	sem := make(chan struct{}, maxInbound)
	for {
		select {
		case sem <- struct{}{}:
		case <-p.ctx.Done():
			return ErrClosed
		}
		c, err := l.Accept()
		if err != nil {
			<-sem
			if p.ctx.Err() != nil {
				return ErrClosed
			}
			return fmt.Errorf("egress: inbound accept: %w", err)
		}
		if !p.track(c) {
			<-sem
			return ErrClosed
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-sem }()
			defer p.untrack(c)
			u, err := dialIn(ns, port)
			if err != nil {
				reset(c)
				return
			}
			if !p.track(u) {
				return
			}
			defer p.untrack(u)
			relay(c, u)
		}()
	}
}

// dialIn connects to 127.0.0.1:port in ns: a blocking connect, bounded
// by SO_SNDTIMEO (10 s), in the calling goroutine.
func dialIn(ns *os.File, port uint16) (net.Conn, error) {
	fd, err := socketIn(ns)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "inbound")
	defer f.Close()
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{Sec: 10})
	for tries := 0; ; tries++ {
		err = unix.Connect(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}})
		// Interrupted (the runtime's signals): the connection goes on
		// in the kernel; asking again says how it ended.
		if err == unix.EISCONN && tries > 0 {
			err = nil
		}
		if (err != unix.EINTR && err != unix.EALREADY) || tries > 1000 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("egress: inbound connect to port %d: %w", port, err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{})
	return net.FileConn(f) // dups fd, non-blocking, on the runtime's poller
}
