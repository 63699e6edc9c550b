//go:build linux

package egress

import (
	"context"
	"errors"
	"net"
	"slices"
)

// ServeDNS answers the program's DNS queries on c, the resolver socket of
// the transparent path (a UDP socket on the wildcard address and port 53
// in the program's namespace, where every address is local: it receives a
// query sent to any resolver address). Each answer leaves from the address
// its query was sent to. What it answers: see answerDNS in dns.go; TCP
// (a truncated answer's retry) is not served: answers are kept small
// enough not to be truncated. At most maxDNSInflight queries are answered
// at once; others are dropped unanswered (a resolver retries). Like Serve,
// it owns and closes c, and returns ErrClosed after Close.
func (p *Proxy) ServeDNS(c *net.UDPConn) error {
	if !p.trackServer(c) {
		return ErrClosed
	}
	defer p.wg.Done()
	defer p.untrack(c)
	if err := EnablePacketInfo(c); err != nil {
		return err
	}
	sem := make(chan struct{}, maxDNSInflight)
	buf := make([]byte, 1500)
	for {
		n, from, to, err := ReadDatagram(c, buf)
		if err != nil {
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return ErrClosed
			}
			continue // a datagram without its destination: unanswerable
		}
		select {
		case sem <- struct{}{}:
		default:
			continue
		}
		q := slices.Clone(buf[:n])
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(p.ctx, dnsTimeout)
			resp := p.answerDNS(ctx, q)
			cancel()
			if resp != nil {
				WriteDatagram(c, resp, to, from)
			}
		}()
	}
}

// trackServer registers c (closed by Close) and a goroutine that serves
// it, unless the proxy is closed (c is then closed).
func (p *Proxy) trackServer(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return true
}
