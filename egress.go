package sandbox

import (
	"sync"
	"sync/atomic"

	"github.com/openparallax/sandbox/internal/linux"
	"github.com/openparallax/sandbox/internal/spec"
)

// DeniedRequest is one network request the egress layer of a sandbox
// refused (see [Egress]): a host and port not on Config.AllowedTCPConnect,
// an allowed name that resolved only to the caller's own or internal
// addresses (DNS rebinding), a request the proxy could not read, or one
// past the proxy's bounds (the caller serves the proxy, outside the
// program's limits, so a program's requests may cost it only so much); on
// the transparent path (EgressTransparent) also a direct connection to an
// allowed port at an address no entry names (reset), and a DNS lookup of a
// name not on the list (NXDOMAIN). A connection to a port not on the list
// is refused by Landlock in the kernel and never reaches the caller: it is
// not listed.
type DeniedRequest = spec.DeniedRequest

// Egress is the network egress of one sandboxed command: when
// Config.AllowedTCPConnect names hosts (DNS names, localhost, IP literals,
// address ranges; not "*"), WrapCommand and Run on Linux start the program in a network
// namespace of its own that has nothing but a loopback interface, and the
// caller, outside the sandbox, checks every connection the program makes
// against the allowlist: direct connections and DNS lookups on the
// transparent path (EgressTransparent), requests to its proxy (see
// PlanFor's tcp_connect_host and [Plan].Egress, and docs/egress.md).
//
// Run manages its proxy itself and returns the refused requests in
// RunResult.DeniedRequests. A caller of WrapCommand gets the proxy with
// [EgressOf] and owns it: the proxy serves from cmd.Start on, and runs until
// Close, which the caller must call once the program and every process it
// started are gone (after cmd.Wait): until then it holds the namespace's
// listener and the goroutines that serve it. Closing it earlier cuts the
// program off the network (nothing else breaks). As a safety net, a proxy
// whose *exec.Cmd becomes unreachable is closed when the garbage collector
// reclaims the command; do not rely on that for timing.
//
// The proxy runs in the caller, outside the program's memory and CPU
// limits, so it bounds what the program's requests may cost: 32 KiB and
// 100 header fields per request head, 10 s to send one, 128 connections at
// once (16 more are accepted only to be refused), 1 MiB of request heads
// held for the sandbox; a request past a bound is answered with an error
// (HTTP 431, 408, 503; SOCKS5 general failure) and listed with its reason
// (see [DeniedRequest].Reason). With the bounds, a program flooding its
// proxy costs the caller a few MiB of heap.
type Egress struct {
	addr   string
	impl   egressImpl
	close  sync.Once
	closed atomic.Bool
}

// egressImpl is the platform's proxy (Linux only).
type egressImpl = linux.Proxy

// Addr is the proxy's address as the program sees it, inside its own
// network namespace ("127.0.0.1:PORT"; the program's HTTP_PROXY,
// HTTPS_PROXY and ALL_PROXY name it), or "" when there is no proxy. The
// transparent path (Plan.Egress.Mode EgressTransparent) keeps the proxy
// beside it for proxy-aware clients.
func (e *Egress) Addr() string { return e.addr }

// Denied returns the requests refused so far, oldest first (at most the
// first 1000; Dropped counts the rest). It still answers after Close.
func (e *Egress) Denied() []DeniedRequest { return e.impl.Denied() }

// Dropped returns how many refused requests Denied does not hold.
func (e *Egress) Dropped() int { return e.impl.Dropped() }

// Close stops the proxy: it ends every connection it relays and returns
// once every goroutine and descriptor it used is released. It is safe to
// call more than once, and it forgets the command (EgressOf answers nil).
func (e *Egress) Close() error {
	var err error
	e.close.Do(func() {
		err = e.impl.Close()
		e.closed.Store(true)
	})
	return err
}
