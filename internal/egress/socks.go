package egress

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"syscall"
	"time"
)

// SOCKS5 reply codes (RFC 1928 §6).
const (
	socksOK              = 0x00
	socksFailure         = 0x01
	socksNotAllowed      = 0x02 // connection not allowed by ruleset
	socksNetUnreachable  = 0x03
	socksHostUnreachable = 0x04
	socksRefused         = 0x05
	socksCmdUnsupported  = 0x07
	socksAddrUnsupported = 0x08
)

// serveSOCKS serves one SOCKS5 CONNECT (RFC 1928) without authentication.
// Host names (ATYP 3) are resolved by the proxy, so "socks5h://" clients
// never need DNS inside the sandbox. BIND and UDP ASSOCIATE are refused.
// With busy set (the connection came past MaxConns) the request is read
// only to be refused with a general failure.
//
// The greeting and request are read under the head bounds (see [Options]);
// a request stopped by one is answered with a general failure (once the
// greeting was answered: before, there is no way to say why) and recorded.
func (p *Proxy) serveSOCKS(c net.Conn, br *bufio.Reader, m *meter, busy *Denial) {
	greeted := false
	host, port, ok, err := p.readSOCKS(c, br, &greeted)
	if err != nil {
		p.refuseHead(c, "socks5", m, err, &Denial{Host: host, Port: port})
		if greeted {
			if reason, _, _ := p.headError(m, err); reason != "" {
				socksReply(c, socksFailure)
			}
		}
		return
	}
	if !ok {
		return // refused, recorded and answered by readSOCKS
	}
	m.endHead()
	c.SetReadDeadline(time.Time{})
	if busy != nil {
		busy.Protocol, busy.Host, busy.Port = "socks5", host, port
		p.deny(*busy)
		socksReply(c, socksFailure)
		return
	}
	m.release()
	u, d, err := p.dialChecked(p.ctx, "socks5", host, port)
	if d != nil {
		socksReply(c, socksNotAllowed)
		return
	}
	if err != nil {
		socksReply(c, socksCode(err))
		return
	}
	defer p.untrack(u)
	if socksReply(c, socksOK) != nil {
		return
	}
	if _, err := u.Write(peekBuffered(br)); err != nil {
		return
	}
	relay(c, u)
}

// readSOCKS reads the greeting, answers it, and reads a CONNECT request.
// It returns ok false and no error for a request it refused itself
// (recorded, and answered where SOCKS5 has an answer); an error is the
// connection's (a bound, the client gone), with what was read of the
// destination. *greeted tells whether the greeting was answered.
func (p *Proxy) readSOCKS(c net.Conn, br *bufio.Reader, greeted *bool) (host string, port uint16, ok bool, err error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", 0, false, err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", 0, false, err
	}
	if !slices.Contains(methods, 0x00) {
		p.deny(Denial{Protocol: "socks5", Reason: ReasonUnsupported, Detail: "SOCKS5 client offers no \"no authentication\" method"})
		c.Write([]byte{5, 0xff})
		return "", 0, false, nil
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return "", 0, false, err
	}
	*greeted = true
	var req [4]byte // VER CMD RSV ATYP
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return "", 0, false, err
	}
	if req[0] != 5 {
		p.deny(Denial{Protocol: "socks5", Reason: ReasonMalformed, Detail: fmt.Sprintf("SOCKS request version %d", req[0])})
		return "", 0, false, nil
	}
	switch req[3] {
	case 1, 4:
		b := make([]byte, 4)
		if req[3] == 4 {
			b = make([]byte, 16)
		}
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, false, err
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return "", 0, false, err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, false, err
		}
		host = string(b)
	default:
		p.deny(Denial{Protocol: "socks5", Reason: ReasonMalformed, Detail: fmt.Sprintf("SOCKS address type %d", req[3])})
		socksReply(c, socksAddrUnsupported)
		return "", 0, false, nil
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return host, 0, false, err
	}
	port = binary.BigEndian.Uint16(pb[:])
	if req[1] != 1 {
		p.deny(Denial{Protocol: "socks5", Host: host, Port: port, Reason: ReasonUnsupported,
			Detail: fmt.Sprintf("SOCKS command %d: only CONNECT is served", req[1])})
		socksReply(c, socksCmdUnsupported)
		return "", 0, false, nil
	}
	return host, port, true, nil
}

// socksReply answers with code and a bound address of 0.0.0.0:0: the
// caller's own address is none of the sandbox's business, and clients do
// not use it for CONNECT.
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}

func socksCode(err error) byte {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, os.ErrDeadlineExceeded):
		return socksHostUnreachable
	case errors.Is(err, syscall.ECONNREFUSED):
		return socksRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return socksNetUnreachable
	}
	return socksFailure
}
