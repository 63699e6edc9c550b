package egress

// The resolver the caller serves to the program on the transparent path
// (see [Proxy.ServeDNS]): the answers are the caller's own resolution of
// allowed names, so that a connection to an answered address is one the
// transparent relay recognises as that name's.

import (
	"context"
	"net/netip"
	"slices"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	// dnsTTL is the TTL of every answer, in seconds: short, since the
	// answer is the caller's view of the moment (the relay remembers
	// answered addresses for addrMemory anyway).
	dnsTTL = 5
	// maxDNSAnswers bounds the records of one answer (16 AAAA records
	// and the question fit in 512 bytes).
	maxDNSAnswers = 16
	// maxDNSInflight bounds the queries being answered at once (each may
	// wait for the caller's resolver); a query beyond it is dropped, and
	// the program's resolver retries.
	maxDNSInflight = 16
	// dnsTimeout bounds the caller's lookup for one query.
	dnsTimeout = 5 * time.Second
)

// answerDNS returns the response to the query q, or nil for a message
// that gets none (a response, or something that does not parse as a DNS
// header).
//
//   - A and AAAA for a name some rule names ("localhost" included, on any
//     port): the caller's addresses for it ("localhost": 127.0.0.1 and
//     ::1, never asked of a resolver) that [Allowlist.AddrAllowed] allows
//     on one of the name's ports, at most maxDNSAnswers; none allowed is
//     REFUSED and a [Denial] (ReasonNonPublic); a failed lookup SERVFAIL.
//   - any other type for such a name: an empty answer (NOERROR).
//   - every other name: NXDOMAIN and a Denial (ReasonNotAllowed), or
//     for a name that is not a DNS name, ReasonMalformed.
//   - other opcodes, classes, or not exactly one question: NOTIMP,
//     REFUSED or FORMERR, no Denial (nothing was asked for).
func (p *Proxy) answerDNS(ctx context.Context, q []byte) []byte {
	var parser dnsmessage.Parser
	h, err := parser.Start(q)
	if err != nil || h.Response {
		return nil
	}
	qs, err := parser.AllQuestions()
	resp := dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	switch {
	case h.OpCode != 0:
		resp.RCode = dnsmessage.RCodeNotImplemented
		return buildDNS(resp, nil, nil)
	case err != nil || len(qs) != 1:
		resp.RCode = dnsmessage.RCodeFormatError
		return buildDNS(resp, nil, nil)
	case qs[0].Class != dnsmessage.ClassINET:
		resp.RCode = dnsmessage.RCodeRefused
		return buildDNS(resp, &qs[0], nil)
	}
	question := qs[0]
	name, err := canonicalName(question.Name.String())
	if err != nil {
		p.deny(Denial{Protocol: "dns", Host: question.Name.String(), Reason: ReasonMalformed, Detail: err.Error()})
		resp.RCode = dnsmessage.RCodeNameError
		return buildDNS(resp, &question, nil)
	}
	ports, anyPort := p.allow.hostPorts(name)
	if len(ports) == 0 && !anyPort {
		p.deny(Denial{Protocol: "dns", Host: name, Reason: ReasonNotAllowed, Detail: "lookup of " + name + ", which no rule names"})
		resp.RCode = dnsmessage.RCodeNameError
		return buildDNS(resp, &question, nil)
	}
	if question.Type != dnsmessage.TypeA && question.Type != dnsmessage.TypeAAAA {
		return buildDNS(resp, &question, nil)
	}
	addrs, rcode := p.dnsAddrs(ctx, name, ports, anyPort)
	resp.RCode = rcode
	want4 := question.Type == dnsmessage.TypeA
	addrs = slices.DeleteFunc(addrs, func(a netip.Addr) bool { return a.Is4() != want4 })
	return buildDNS(resp, &question, addrs[:min(len(addrs), maxDNSAnswers)])
}

// dnsAddrs resolves an allowed name in the caller (at most once per name
// every dnsTTL seconds, however many queries the program sends) and keeps
// what the allowlist allows on one of ports (or, for a name an any-port
// rule allows, on every port: addrAllowedAnyPort); the relay remembers
// the answer.
func (p *Proxy) dnsAddrs(ctx context.Context, name string, ports []uint16, anyPort bool) ([]netip.Addr, dnsmessage.RCode) {
	var addrs []netip.Addr
	check := p.allow.AddrAllowed
	var own []netip.Addr
	if name == "localhost" {
		addrs = []netip.Addr{loopback4, loopback6}
	} else {
		if cached, ok := p.names.lastAnswer(name); ok {
			addrs = cached
		} else {
			var err error
			if addrs, err = p.resolve(ctx, name); err != nil {
				return nil, dnsmessage.RCodeServerFailure
			}
			p.names.setAnswer(name, addrs)
		}
		// As the proxy does: a name's answer never includes the
		// caller's own interface addresses, and without their list no
		// answer passes.
		var err error
		own, err = p.local()
		if err != nil {
			p.deny(Denial{Protocol: "dns", Host: name, Reason: ReasonNonPublic,
				Detail: "cannot tell " + name + "'s addresses from the caller's own: " + err.Error()})
			return nil, dnsmessage.RCodeRefused
		}
		check = func(a netip.Addr, port uint16) (bool, string) { return p.allow.AddrAllowedHere(a, port, own) }
	}
	var ok []netip.Addr
	why := ""
	for _, a := range addrs {
		a = a.Unmap()
		allowed := false
		if anyPort {
			if y, w := p.allow.addrAllowedAnyPort(a, own); y {
				allowed = true
			} else if why == "" {
				why = w
			}
		}
		for _, port := range ports {
			if y, w := check(a, port); y {
				allowed = true
			} else if why == "" {
				why = w
			}
		}
		if allowed && !slices.Contains(ok, a) {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 && len(addrs) > 0 {
		p.deny(Denial{Protocol: "dns", Host: name, Reason: ReasonNonPublic,
			Detail: name + " resolves only to addresses the allowlist does not allow (" + why + ")"})
		return nil, dnsmessage.RCodeRefused
	}
	p.names.record(name, ok)
	return ok, dnsmessage.RCodeSuccess
}

// buildDNS makes a response: the header, the question when there is one,
// and an A or AAAA record for each address.
func buildDNS(h dnsmessage.Header, q *dnsmessage.Question, addrs []netip.Addr) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if q != nil {
		if b.StartQuestions() != nil || b.Question(*q) != nil {
			return nil
		}
	}
	if b.StartAnswers() != nil {
		return nil
	}
	for _, a := range addrs {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
		var err error
		if a.Is4() {
			err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		} else {
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
