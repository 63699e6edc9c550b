//go:build linux

package sandbox

import (
	"context"
	"net"
	"net/netip"

	"github.com/openparallax/sandbox/internal/linux"
)

// SetEgressTestNet replaces the resolver and dialer of every egress proxy
// started from now on (tests map names to local servers without touching
// /etc/hosts, and send nothing outside the loopback), until restore.
func SetEgressTestNet(resolve func(ctx context.Context, host string) ([]netip.Addr, error),
	dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)) (restore func()) {
	return linux.SetEgressTestNetHook(resolve, dial)
}

// ForceGoTrampoline makes WrapCommand use the Go trampoline as its child
// half, until restore (benchmarks separate its cost from the namespace's).
func ForceGoTrampoline() (restore func()) { return linux.ForceGoTrampolineHook() }

// SetInboundPoolPerPort sets the size of each port's inbound pool for a
// non-root caller in Configs resolved from now on, until restore.
func SetInboundPoolPerPort(n int) (restore func()) { return linux.SetInboundPoolPerPortHook(n) }
