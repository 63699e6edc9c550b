//go:build linux

package linux

// The parent's half of egress by host name under WrapCommand and Run (the
// child's half is the Go trampoline's network step, internal/trampoline's
// net_linux.go; the proxy is internal/egress).
//
//  1. egressPlanFor decides, from the Config alone and the namespace probe,
//     whether host entries are enforced by a namespace and a proxy, and if
//     not, why not (PlanFor reports it, Strict refuses it).
//  2. startEgress (from wrapLinux) makes the socket pair whose child end the
//     child inherits, a Proxy with the Config's allowlist, and a goroutine
//     that receives the listener the child makes in its namespace and
//     serves the proxy on it.
//  3. The program's environment gets the proxy variables; Landlock lets it
//     connect to the proxy's port only (inside its namespace nothing else
//     is reachable anyway: lo only, no route).
//  4. Run closes the proxy when the process tree is gone; a WrapCommand
//     caller through EgressOf(cmd).Close.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/egress"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// egressTestNet, when set (tests), replaces the proxy's resolver and dialer:
// tests map names to local servers without touching /etc/hosts, and send
// nothing outside the loopback.
var egressTestNet struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
}

// EgressProc is the caller's side of one namespace's proxy (what
// sandbox.Egress wraps): it serves from cmd.Start on, until Close.
type EgressProc struct {
	addr      string // as the program sees it
	proxy     *egress.Proxy
	parentEnd *os.File      // the caller's end of the handoff socket pair
	childEnd  *os.File      // inherited by the child; closed after Start
	done      chan struct{} // closed when the receiving goroutine returns

	mu         sync.Mutex
	childClose bool
	// resolvDir holds the generated resolv.conf (the transparent path):
	// removed at close.
	resolvDir string
	// inbound are the caller's listeners for the program's ports
	// (egressPlan.inbound, in order): closed at close.
	inbound []net.Listener
}

// startEgress makes the proxy of plan e and the handoff channel; the
// returned childEnd goes into the child's inherited files. Serving starts
// as soon as the child hands its listener over.
func startEgress(e egressPlan) (*EgressProc, error) {
	p, err := egress.New(egress.Options{Allow: e.allow, Resolve: egressTestNet.resolve, Dial: egressTestNet.dial})
	if err != nil {
		return nil, err
	}
	parentEnd, childEnd, err := egress.SocketPair()
	if err != nil {
		p.Close()
		return nil, err
	}
	g := &EgressProc{addr: e.addr().String(), proxy: p, parentEnd: parentEnd, childEnd: childEnd, done: make(chan struct{})}
	if g.inbound, err = listenInbound(e.inbound); err != nil {
		p.Close()
		parentEnd.Close()
		childEnd.Close()
		return nil, err
	}
	go func() {
		defer close(g.done)
		// No timeout: the wait ends when the child sends, when it dies
		// (once the caller's copy of the child's end is closed), or at
		// close, which shuts the socket down.
		// A failure (the child died before its network step, or close)
		// needs no report here: Run reports the child's own failure,
		// and the program never started.
		h, err := egress.ReceiveSockets(parentEnd, 1<<62, e.transparent, e.poolSize())
		if err != nil {
			closeAll(g.inbound)
			return
		}
		// The caller's copy of the child's end stays open until Run
		// closes it after Start, or until close: under WrapCommand,
		// cmd.Start may still be reading it here (the child runs
		// before Start returns).
		serveHandoff(p, h, g.inbound, e.inbound) // returns at close, and closes every socket
	}()
	return g, nil
}

// closeChildEnd closes the caller's copy of the child's end: once the
// child has started (Run, after cmd.Start), or at close.
func (g *EgressProc) closeChildEnd() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.childClose {
		g.childClose = true
		g.childEnd.Close()
	}
}

// Addr is the proxy's address as the program sees it, inside its network
// namespace ("127.0.0.1:PORT"), or "" when there is no proxy.
func (g *EgressProc) Addr() string { return g.addr }

// Denied returns the requests refused so far, oldest first (at most the
// first 1000; Dropped counts the rest). It still answers after Close.
func (g *EgressProc) Denied() []spec.DeniedRequest {
	ds := g.proxy.Denied()
	out := make([]spec.DeniedRequest, len(ds))
	for i, d := range ds {
		out[i] = spec.DeniedRequest{Time: d.Time, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: d.Reason, Detail: d.Detail}
	}
	return out
}

// Dropped returns how many refused requests Denied does not hold.
func (g *EgressProc) Dropped() int { return g.proxy.Dropped() }

// Close ends the proxy and its receiving goroutine, and releases every
// descriptor: the handoff channel and, through the proxy, the listener,
// which is the last reference to the namespace once its processes are
// gone.
func (g *EgressProc) Close() error {
	// Wake a receive still waiting (the child never started, or never
	// reached its network step): shutdown reaches the socket under the
	// receiver's duplicate of it.
	if rc, err := g.parentEnd.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
	}
	g.proxy.Close()
	<-g.done
	g.proxy.Close() // a Serve that began after the first Close returned at once; wait for it anyway
	g.closeChildEnd()
	g.parentEnd.Close()
	closeAll(g.inbound)
	if g.resolvDir != "" {
		os.RemoveAll(g.resolvDir)
	}
	return nil
}

var (
	netProbeOnce sync.Once
	netProbed    nsState
	// netNamespacesAvailable is netNamespaces; tests replace it to plan
	// for a machine without network namespaces.
	netNamespacesAvailable = netNamespaces
)

// netNamespaces reports whether WrapCommand and Run can start their child
// half in a new network namespace and hand the proxy's listener out of it
// here. The namespace layer's probe (namespaces) must succeed first; then,
// once per process, the Go trampoline is started as for a Config naming
// hosts (nsAttr with the network namespace), with no mounts and the
// network step for real: it brings lo up, listens, and hands the listener
// over, which the probe receives and closes. A network namespace can be
// refused where the others are not (a container's seccomp profile, an LSM),
// and lo can stay down without CAP_NET_ADMIN in it.
func netNamespaces() (ok bool, reason, hint string) {
	if s := namespaces(); !s.ok {
		return false, s.reason, s.hint
	}
	netProbeOnce.Do(func() { netProbed = probeNetNamespace() })
	return netProbed.ok, netProbed.reason, netProbed.hint
}

func probeNetNamespace() nsState { return probeNetStep(nil) }

// probeNetStep runs the network step with the transparent ports given
// (none: the proxy's listener only) in a throwaway namespace, and receives
// what it hands over.
func probeNetStep(transparent []uint16) nsState {
	parentEnd, childEnd, err := egress.SocketPair()
	if err != nil {
		return nsState{reason: "probe: " + err.Error()}
	}
	defer parentEnd.Close()
	p := &trampoline.Payload{Path: "/", FirstFD: 3, ErrFD: 3,
		Flags: trampoline.FlagNamespaces | trampoline.FlagProbe,
		Net:   trampoline.NetStep{FD: 4, Port: egressPortBase, Transparent: transparent}}
	var lerr error
	helper, _ := childHalf()
	pr, err := runProbe("network-namespace-probe", helper, p, true, []*os.File{childEnd}, func() {
		var h *egress.Handoff
		if h, lerr = egress.ReceiveSockets(parentEnd, 30*time.Second, transparent, 0); lerr == nil {
			h.Close()
		}
	})
	switch {
	case err != nil:
		return nsState{reason: "probe: " + err.Error()}
	case pr.startErr != nil:
		s := refusedNamespaces(pr.startErr, thisHost())
		s.reason = "with a network namespace: " + s.reason
		return s
	case pr.waitErr == nil && lerr == nil:
		return nsState{ok: true}
	case pr.waitErr == nil:
		return nsState{reason: "the network namespace's listener did not reach the caller: " + lerr.Error()}
	case pr.failure == nil:
		return nsState{reason: fmt.Sprintf("the network namespace probe's child failed (%v) without a report", pr.waitErr)}
	}
	s := nsState{reason: "the network namespace was created, but the network step failed: " + pr.failure.Error()}
	if pr.failure.Errno == syscall.EPERM || pr.failure.Errno == syscall.EACCES {
		s.reason += ": refused by a seccomp filter or an LSM, or no CAP_NET_ADMIN in the namespace"
		s.hint = "allow this program to create network namespaces (a container's seccomp profile or AppArmor), or run it outside the container"
	}
	return s
}
