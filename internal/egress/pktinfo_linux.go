//go:build linux

package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The resolver socket is bound to the wildcard address, and a query may
// be sent to any address (the namespace's routes make all of them local):
// the answer must leave from the address the query was sent to, or the
// program's resolver (which checks, or whose connected socket filters)
// drops it. IPV6_PKTINFO tells both ways, for IPv4 too on a dual-stack
// socket (as an IPv4-mapped address; the kernel's ip_cmsg_send accepts
// one on a send). golang.org/x/net/ipv6 drops mapped source addresses,
// hence these few lines.

// EnablePacketInfo asks the kernel to tell, with each datagram c reads,
// the address it was sent to (IPV6_RECVPKTINFO).
func EnablePacketInfo(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("egress: IPV6_RECVPKTINFO: %w", serr)
	}
	return nil
}

// ReadDatagram reads one datagram into b and returns its length, its
// sender, and the address it was sent to (IPv4 unmapped). c must have
// [EnablePacketInfo].
func ReadDatagram(c *net.UDPConn, b []byte) (n int, from netip.AddrPort, to netip.Addr, err error) {
	oob := make([]byte, unix.CmsgSpace(unix.SizeofInet6Pktinfo))
	n, oobn, _, from, err := c.ReadMsgUDPAddrPort(b, oob)
	if err != nil {
		return 0, from, to, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return 0, from, to, fmt.Errorf("egress: datagram control message: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_PKTINFO && len(m.Data) >= unix.SizeofInet6Pktinfo {
			pi := (*unix.Inet6Pktinfo)(unsafe.Pointer(&m.Data[0]))
			to = netip.AddrFrom16(pi.Addr).Unmap()
		}
	}
	if !to.IsValid() {
		return 0, from, to, errors.New("egress: datagram without its destination address")
	}
	return n, netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), to, nil
}

// WriteDatagram sends b to to, from the local address src (the address
// the query it answers was sent to).
func WriteDatagram(c *net.UDPConn, b []byte, src netip.Addr, to netip.AddrPort) error {
	oob := make([]byte, unix.CmsgSpace(unix.SizeofInet6Pktinfo))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
	h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
	pi := (*unix.Inet6Pktinfo)(unsafe.Pointer(&oob[unix.CmsgLen(0)]))
	pi.Addr = src.As16() // IPv4 as ::ffff:a.b.c.d
	dst := netip.AddrPortFrom(netip.AddrFrom16(to.Addr().As16()), to.Port())
	_, _, err := c.WriteMsgUDPAddrPort(b, oob, dst)
	return err
}
