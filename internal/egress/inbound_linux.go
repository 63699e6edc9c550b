//go:build linux

package egress

// Inbound: connections from the caller's loopback to a port the confined
// program listens on inside its network namespace. Each is relayed through
// a TCP socket of that namespace, connected there to 127.0.0.1:PORT; where
// the socket comes from is the only difference between the two sources:
//
//   - a root caller makes one per connection (namespaceSource: setns into
//     the namespace on a locked thread, for the socket() call only): no
//     bound on the number of connections over the sandbox's life;
//   - a caller that cannot enter the namespace (not root: setns needs
//     CAP_SYS_ADMIN in the caller's own user namespace too) uses a Pool of
//     sockets the child half made there before the target started: each
//     serves one connection, so the pool bounds the connections over the
//     sandbox's life; when it is empty, a connection is reset and recorded
//     as a Denial (ReasonInboundPool).

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// maxInbound bounds the inbound connections relayed at once per listener.
const maxInbound = 64

// errPoolEmpty: the pool has no socket left.
var errPoolEmpty = errors.New("egress: the inbound pool is empty")

// inboundSource gives a socket of the program's namespace for one inbound
// connection (blocking, close-on-exec, AF_INET TCP, unconnected), and
// takes back one whose connect was refused (the program is not listening
// yet): Linux lets a TCP socket connect again after ECONNREFUSED.
type inboundSource interface {
	take() (*os.File, error)
	refused(f *os.File)
}

// namespaceSource makes each socket in the namespace ns (root only).
type namespaceSource struct{ ns *os.File }

func (s namespaceSource) take() (*os.File, error) {
	fd, err := socketIn(s.ns)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "inbound"), nil
}

func (namespaceSource) refused(f *os.File) { f.Close() }

// Pool is a fixed set of sockets made in the program's namespace by the
// child half ([Handoff].Pool), for one port: each is connected at most
// once (a refused connect gives it back). Safe for concurrent use.
type Pool struct {
	mu     sync.Mutex
	files  []*os.File
	size   int // as made: for the report
	closed bool
}

// NewPool makes a pool of files, which it owns from then on (closed when
// used, or by Close).
func NewPool(files []*os.File) *Pool { return &Pool{files: files, size: len(files)} }

// Len returns how many sockets are left.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.files)
}

// Close closes every socket left.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.files {
		f.Close()
	}
	p.files, p.closed = nil, true
}

func (p *Pool) take() (*os.File, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.files) == 0 {
		return nil, errPoolEmpty
	}
	f := p.files[len(p.files)-1]
	p.files = p.files[:len(p.files)-1]
	return f, nil
}

func (p *Pool) refused(f *os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		f.Close()
		return
	}
	p.files = append(p.files, f)
}

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
// port the confined program listens on): a socket made in ns for each
// (the caller must be able to setns there: root), connected there, at most
// maxInbound at once. It owns and closes l, and returns ErrClosed after
// Close. What reaches l is the caller's business: whoever can connect to
// it reaches the program's port.
func (p *Proxy) ServeInbound(l net.Listener, ns *os.File, port uint16) error {
	return p.serveInbound(l, namespaceSource{ns}, port)
}

// ServeInboundPool is ServeInbound for a caller that cannot enter the
// namespace: each connection takes a socket of pool, which the child half
// made in the namespace. When pool is empty, a connection is reset and
// recorded as a Denial with Protocol "inbound", Host "127.0.0.1", the
// port, and ReasonInboundPool. It owns pool and closes it on return.
func (p *Proxy) ServeInboundPool(l net.Listener, pool *Pool, port uint16) error {
	defer pool.Close()
	return p.serveInbound(l, pool, port)
}

func (p *Proxy) serveInbound(l net.Listener, src inboundSource, port uint16) error {
	if !p.startServing(l) {
		return ErrClosed
	}
	defer p.stopServing(l)
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
			p.relayIn(c, src, port)
		}()
	}
}

// relayIn relays c to the program's port through a socket of src; a
// connection that gets none is reset (and, for an empty pool, recorded).
func (p *Proxy) relayIn(c net.Conn, src inboundSource, port uint16) {
	u, err := dialIn(src, port)
	if pool, ok := src.(*Pool); ok && errors.Is(err, errPoolEmpty) {
		p.deny(Denial{Protocol: "inbound", Host: "127.0.0.1", Port: port, Reason: ReasonInboundPool,
			Detail: fmt.Sprintf("connection from %v to the program's port %d refused: the %d sockets the sandbox made for it are used (one per connection)",
				c.RemoteAddr(), port, pool.size)})
	}
	if err != nil {
		reset(c)
		return
	}
	if !p.track(u) {
		return
	}
	defer p.untrack(u)
	relay(c, u)
}

// dialIn connects a socket of src to 127.0.0.1:port in its namespace: a
// blocking connect, bounded by SO_SNDTIMEO (10 s), in the calling
// goroutine. A refused connect gives the socket back to src.
func dialIn(src inboundSource, port uint16) (net.Conn, error) {
	f, err := src.take()
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd()) // blocking, as received or made
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
	if err == unix.ECONNREFUSED {
		src.refused(f)
		return nil, fmt.Errorf("egress: inbound connect to port %d: %w", port, err)
	}
	defer f.Close()
	if err != nil {
		return nil, fmt.Errorf("egress: inbound connect to port %d: %w", port, err)
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{})
	return net.FileConn(f) // dups fd, non-blocking, on the runtime's poller
}
