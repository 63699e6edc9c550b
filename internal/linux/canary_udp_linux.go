//go:build linux

package linux

import (
	"os"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
	"golang.org/x/sys/unix"
)

// udpProbeAddr is where the udp probe aims a UDP socket when the sandbox
// lets it make one: TEST-NET-1 (RFC 5737), port 9 (discard), an address
// no network routes to. Nothing is sent: connect() on a UDP socket only
// looks the route up.
var udpProbeAddr = [4]byte{192, 0, 2, 1}

// udpContainment classifies the udp probe when socket(AF_INET, SOCK_DGRAM)
// succeeded without Config.AllowUDP. Under WrapCommand and Run with the
// egress layer's transparent path, the program may make UDP sockets (its
// resolver needs them) because nothing can leave its network namespace:
// there the probe counts as blocked when (1) the namespace has no
// interface but lo and (2) the kernel's route to an address no network
// routes to is local (connect() picks that address itself as the source:
// a datagram would be delivered in the namespace, where only the caller's
// resolver socket on port 53 receives anything, and reach nothing else).
// Anywhere else a UDP socket that could be made is a failure: it may reach
// any host.
func udpContainment(fd int) spec.ProbeResult {
	const target = "socket(AF_INET, SOCK_DGRAM), then connect (no datagram sent) to 192.0.2.1:9"
	r := spec.ProbeResult{Name: "udp", Target: target, Status: spec.ProbeFailed}
	if ifs := interfaces(); len(ifs) != 1 || ifs[0] != "lo" {
		r.Error = "not denied: UDP sockets can be made, and the network namespace has interfaces " + strings.Join(ifs, ", ")
		return r
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: 9, Addr: udpProbeAddr}); err != nil {
		// ENETUNREACH: no route at all; nothing could be sent either,
		// but that is not the sandbox's containment: say so.
		r.Error = "not denied: UDP sockets can be made; connect: " + err.Error()
		return r
	}
	sa, err := unix.Getsockname(fd)
	if a, ok := sa.(*unix.SockaddrInet4); err != nil || !ok || a.Addr != udpProbeAddr {
		r.Error = "not denied: UDP sockets can be made, and a datagram to 192.0.2.1 would not stay in this namespace"
		return r
	}
	r.Status = spec.ProbeBlocked
	r.Error = "contained: UDP sockets are allowed (the egress resolver), but this network namespace has only lo and every address is local to it: a datagram reaches nothing but the caller's resolver"
	return r
}

// interfaces are the network interfaces of this process's namespace.
func interfaces() []string {
	dev, err := os.ReadFile("/proc/self/net/dev")
	if err != nil {
		return []string{"(unreadable: " + err.Error() + ")"}
	}
	var out []string
	lines := strings.Split(string(dev), "\n")
	for _, line := range lines[min(2, len(lines)):] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}
