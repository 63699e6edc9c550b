//go:build linux

package trampoline

// The transparent path of the network step (see netStep): the child makes,
// before the target starts, what lets the caller relay a direct connect()
// to any address of an allowed port, and answer the program's DNS queries,
// from outside the sandbox. Nothing of it runs once the target starts:
// routes and sockets are kernel objects, the sockets the caller's.
//
//   - localRoutes: "local 0.0.0.0/0 dev lo" and "local ::/0 dev lo" in the
//     local table (ip-route(8)'s "ip route add local 0.0.0.0/0 dev lo"):
//     every address is the namespace's own, so a connect() to any IP:PORT
//     reaches a listener on the wildcard address and that port, and
//     getsockname() on the accepted socket is the address dialled. No
//     route leads anywhere else: the namespace has only lo.
//   - one TCP listener per port on [::]:PORT, dual-stack (IPV6_V6ONLY 0:
//     IPv4 arrives as ::ffff:a.b.c.d), each handed over with tag 'T';
//   - a UDP socket on [::]:53, dual-stack, handed over with tag 'U': it
//     receives a query sent to any resolver address.

import "syscall"

const (
	transparentTag = 'T' // internal/egress's tagTransparent
	resolverTag    = 'U' // internal/egress's tagResolver
	resolverPort   = 53

	netlinkRoute = 0     // NETLINK_ROUTE
	rtmNewRoute  = 24    // RTM_NEWROUTE
	nlmsgError   = 2     // NLMSG_ERROR
	nlmFlags     = 0x605 // NLM_F_REQUEST|NLM_F_ACK|NLM_F_EXCL|NLM_F_CREATE
	rtTableLocal = 255   // RT_TABLE_LOCAL
	rtprotBoot   = 3     // RTPROT_BOOT, as ip-route(8) sets
	rtScopeHost  = 254   // RT_SCOPE_HOST
	rtnLocal     = 2     // RTN_LOCAL
	rtaOIF       = 4     // RTA_OIF
	routeMsgLen  = 16 + 12 + 8
	ipv6V6Only   = 26 // IPV6_V6ONLY
)

// localRoutes adds the two local default routes through lo (interface
// index lo) with rtnetlink, one request and one acknowledgement each.
func localRoutes(lo int32) (Failure, bool) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, netlinkRoute)
	if err != nil {
		return Failure{Step: "socket", Errno: errnoOf(err), Detail: "(netlink route)"}, false
	}
	defer closeFD(fd)
	routes := []struct {
		family int
		detail string
	}{{syscall.AF_INET, "local 0.0.0.0/0 dev lo"}, {syscall.AF_INET6, "local ::/0 dev lo"}}
	for i, r := range routes {
		if e := addLocalRoute(fd, uint8(r.family), uint32(i+1), lo); e != 0 {
			return Failure{Step: "netlink(RTM_NEWROUTE)", Errno: e, Detail: r.detail}, false
		}
	}
	return Failure{}, true
}

// addLocalRoute sends one RTM_NEWROUTE (struct nlmsghdr, struct rtmsg,
// RTA_OIF) and reads its acknowledgement: the errno it carries, or
// EPROTO for an answer that is not the acknowledgement of seq.
func addLocalRoute(fd int, family uint8, seq uint32, lo int32) syscall.Errno {
	var m [routeMsgLen]byte
	le32(m[0:], routeMsgLen)
	le16(m[4:], rtmNewRoute)
	le16(m[6:], nlmFlags)
	le32(m[8:], seq)
	// rtmsg: family, dst_len 0 (the default route), src_len, tos, table,
	// protocol, scope, type; flags 0.
	m[16], m[20], m[21], m[22], m[23] = family, rtTableLocal, rtprotBoot, rtScopeHost, rtnLocal
	le16(m[28:], 8)
	le16(m[30:], rtaOIF)
	le32(m[32:], uint32(lo))
	if err := syscall.Sendto(fd, m[:], 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return errnoOf(err)
	}
	var ack [256]byte
	n, _, err := syscall.Recvfrom(fd, ack[:], 0)
	if err != nil {
		return errnoOf(err)
	}
	// struct nlmsghdr, then struct nlmsgerr's int error (0: done).
	if n < 20 || ack[4] != nlmsgError || ack[5] != 0 || rd32(ack[8:]) != seq {
		return syscall.EPROTO
	}
	return syscall.Errno(-int32(rd32(ack[16:])))
}

func le16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }
func le32(b []byte, v uint32) { b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24) }
func rd32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// transparentStep makes and hands over a listener on [::]:port for each
// port, in order, then the resolver's socket.
func transparentStep(sock int, ports []uint16) (Failure, bool) {
	for _, port := range ports {
		fd, f, ok := wildcardSocket(syscall.SOCK_STREAM, port, "(egress listener)")
		if !ok {
			return f, false
		}
		if err := syscall.Listen(fd, listenQueue); err != nil {
			closeFD(fd)
			return Failure{Step: "listen", Errno: errnoOf(err), Detail: "(egress listener)"}, false
		}
		if f, ok := handOver(sock, fd, transparentTag); !ok {
			return f, false
		}
	}
	fd, f, ok := wildcardSocket(syscall.SOCK_DGRAM, resolverPort, "(resolver socket)")
	if !ok {
		return f, false
	}
	return handOver(sock, fd, resolverTag)
}

// wildcardSocket returns a dual-stack socket of type typ bound to
// [::]:port, close-on-exec.
func wildcardSocket(typ int, port uint16, what string) (int, Failure, bool) {
	fd, err := syscall.Socket(syscall.AF_INET6, typ|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, Failure{Step: "socket", Errno: errnoOf(err), Detail: what}, false
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, ipv6V6Only, 0); err != nil {
		closeFD(fd)
		return -1, Failure{Step: "setsockopt(IPV6_V6ONLY)", Errno: errnoOf(err), Detail: what}, false
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet6{Port: int(port)}); err != nil {
		closeFD(fd)
		return -1, Failure{Step: "bind", Errno: errnoOf(err), Detail: "[::]:" + itoa(int(port)) + " " + what}, false
	}
	return fd, Failure{}, true
}
