package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// Address range rules as data: what NewAllowlist refuses, and what Match
// allows: in the range, at both ends, just outside, on the wrong port, on
// any port; IPv4-mapped addresses matched as the IPv4 address they are;
// names never.
func TestAllowlistRange(t *testing.T) {
	for _, r := range []Rule{
		{Host: "10.1.2.3/8", Port: 443},          // bits past the prefix: ParseEndpoint refuses it
		{Host: "FD00::/8", Port: 443},            // not canonical
		{Host: "fd00:0::/8", Port: 443},          //
		{Host: "0.0.0.0/0", Port: 443},           // every address: "*"
		{Host: "::/0", AnyPort: true},            //
		{Host: "10.1.2.3/32", Port: 443},         // one address: the literal
		{Host: "::1/128", Port: 443},             //
		{Host: "::ffff:10.0.0.0/104", Port: 443}, // IPv4-mapped: never matched (destinations are unmapped)
		{Host: "10.0.0.0/33", Port: 443},
		{Host: "10.0.0.0/8", Port: 0},
		{Host: "10.0.0.0/8", Port: 443, AnyPort: true},
		{Host: "10.0.0.0/8/8", Port: 443},
	} {
		if _, err := NewAllowlist([]Rule{r}); err == nil {
			t.Errorf("NewAllowlist(%+v) = nil error, want a refusal", r)
		}
	}
	a := mustAllow(t,
		Rule{Host: "10.0.0.0/8", Port: 443},
		Rule{Host: "192.168.4.0/22", AnyPort: true},
		Rule{Host: "fd00::/8", Port: 443},
		Rule{Host: "::fffe:0:0/95", Port: 443}, // holds all of ::ffff:0:0/96, the IPv4-mapped block
		Rule{Host: "10.1.2.3", Port: 443},      // a literal inside a range: the more precise rule
		Rule{Host: "api.example.test", Port: 443},
	)
	if a.Empty() {
		t.Error("a list with range rules is Empty")
	}
	r443 := func(h string) Rule { return Rule{Host: h, Port: 443} }
	anyR := Rule{Host: "192.168.4.0/22", AnyPort: true}
	for _, c := range []struct {
		host string
		port uint16
		want Rule // zero: refused
	}{
		{"10.0.0.0", 443, r443("10.0.0.0/8")},        // first address
		{"10.255.255.255", 443, r443("10.0.0.0/8")},  // last
		{"10.1.2.4", 443, r443("10.0.0.0/8")},        //
		{"10.1.2.3", 443, r443("10.1.2.3")},          // the literal rule first
		{"9.255.255.255", 443, Rule{}},               // just below
		{"11.0.0.0", 443, Rule{}},                    // just above
		{"10.1.2.4", 80, Rule{}},                     // wrong port
		{"10.1.2.4", 444, Rule{}},                    //
		{"::ffff:10.1.2.4", 443, r443("10.0.0.0/8")}, // IPv4-mapped: 10.1.2.4 itself
		{"[::ffff:10.1.2.4]", 443, r443("10.0.0.0/8")},
		{"::ffff:11.0.0.0", 443, Rule{}},          // does not slip past the IPv4 range
		{"::ffff:a00:1", 443, r443("10.0.0.0/8")}, // 10.0.0.1, spelled in hex
		{"192.168.4.0", 1, anyR},                  // any port, both ends
		{"192.168.7.255", 65535, anyR},            //
		{"::ffff:192.168.5.5", 22, anyR},          //
		{"192.168.3.255", 22, Rule{}},             // just below
		{"192.168.8.0", 22, Rule{}},               // just above
		{"fd00::", 443, r443("fd00::/8")},
		{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 443, r443("fd00::/8")},
		{"[fd12::1]", 443, r443("fd00::/8")},
		{"FD12::1", 443, r443("fd00::/8")},
		{"fcff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 443, Rule{}}, // just below
		{"fe00::", 443, Rule{}},                                  // just above
		{"fd00::1", 80, Rule{}},                                  // wrong port
		{"::fffe:0:1", 443, r443("::fffe:0:0/95")},               // in the IPv6 range
		{"1.2.3.4", 443, Rule{}},                                 // IPv4: never in an IPv6 range,
		{"::ffff:1.2.3.4", 443, Rule{}},                          // however it is spelled
		// A name is matched by name only, whatever it looks like or
		// resolves to.
		{"ten.example.test", 443, Rule{}},
		{"10.0.0.1.nip.test", 443, Rule{}},
		{"api.example.test", 443, r443("api.example.test")},
	} {
		m, reason, detail := a.Match(c.host, c.port)
		if c.want == (Rule{}) {
			if reason != ReasonNotAllowed || detail == "" {
				t.Errorf("Match(%q, %d) = %+v %q (%s), want not-allowed with a detail", c.host, c.port, m.Rule, reason, detail)
			}
			continue
		}
		want, _, err := canonicalHost(c.host)
		if err != nil {
			t.Fatal(err)
		}
		// An allowed address is pinned: the proxy dials exactly it.
		if reason != "" || m.Rule != c.want || len(m.Addrs) != 1 && c.want.Host != "api.example.test" ||
			len(m.Addrs) == 1 && m.Addrs[0].String() != want {
			t.Errorf("Match(%q, %d) = %+v %q (%s), want rule %+v and address %s", c.host, c.port, m, reason, detail, c.want, want)
		}
	}
}

// The rebinding filter treats a range as naming its addresses on its
// port: a private address inside it passes, one outside does not, and the
// caller's own address inside it passes (the program could dial it).
func TestAllowlistRangeAddrAllowed(t *testing.T) {
	a := mustAllow(t, Rule{Host: "10.0.0.0/8", Port: 443}, Rule{Host: "127.0.0.4/31", AnyPort: true})
	own := []netip.Addr{netip.MustParseAddr("10.9.9.9"), netip.MustParseAddr("127.0.0.1")}
	for _, c := range []struct {
		addr string
		port uint16
		ok   bool
	}{
		{"10.1.1.1", 443, true},        // private, in the range
		{"::ffff:10.1.1.1", 443, true}, //
		{"10.1.1.1", 80, false},        // wrong port
		{"172.16.0.1", 443, false},     // private, no rule
		{"10.9.9.9", 443, true},        // the caller's own address, in the range
		{"127.0.0.5", 1, true},         // loopback, in an any-port range
		{"127.0.0.6", 1, false},        // loopback, outside it
		{"127.0.0.1", 443, false},      //
		{"203.0.113.9", 443, true},     // public, not the caller's
	} {
		ok, why := a.AddrAllowedHere(netip.MustParseAddr(c.addr), c.port, own)
		if ok != c.ok {
			t.Errorf("AddrAllowedHere(%s, %d) = %v (%s), want %v", c.addr, c.port, ok, why, c.ok)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.4": true, "127.0.0.6": false, "10.1.1.1": false} {
		if ok, why := a.addrAllowedAnyPort(netip.MustParseAddr(addr), own); ok != want {
			t.Errorf("addrAllowedAnyPort(%s) = %v (%s), want %v", addr, ok, why, want)
		}
	}
	// A range holding loopback addresses means the caller's loopback:
	// NO_PROXY must then not send the program's loopback connections
	// past the proxy. A range without any keeps it.
	for rule, empty := range map[Rule]bool{
		{Host: "127.0.0.4/31", Port: 80}: true,
		{Host: "64.0.0.0/2", Port: 80}:   true, // holds 127.0.0.0/8
		{Host: "::/127", Port: 80}:       true, // holds ::1
		{Host: "10.0.0.0/8", Port: 80}:   false,
		{Host: "fd00::/8", Port: 80}:     false,
	} {
		for _, kv := range Env(netip.MustParseAddrPort("127.0.0.1:3128"), mustAllow(t, rule)) {
			if v, ok := strings.CutPrefix(kv, "NO_PROXY="); ok && (v == "") != empty {
				t.Errorf("with %+v: %s, want empty %v", rule, kv, empty)
			}
		}
	}
}

// rangeServer is an echo server on a loopback address of 127.0.0.0/8 other
// than 127.0.0.1, counting what it accepts; it returns the port.
func rangeServer(t *testing.T, host string) (uint16, *countingListener) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s (loopback here is not all of 127.0.0.0/8): %v", host, err)
	}
	cl := &countingListener{Listener: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := cl.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("echo " + line))
			}()
		}
	}()
	return uint16(l.Addr().(*net.TCPAddr).Port), cl
}

// A range rule through the proxy, for real on loopback: CONNECT and SOCKS5
// to an address in the range reach it; an address outside it, with a
// listener of its own, is refused and never reached; a name that resolves
// into the range is refused (names are matched by name).
func TestProxyRange(t *testing.T) {
	f := newFakeNet(t)
	port, in := rangeServer(t, "127.0.0.4")
	_, out := rangeServer(t, "127.0.0.6")
	out.Close()
	outPort, out := rangeServer(t, "127.0.0.6") // a listener outside the range, on a port of its own
	f.Alias("inrange.example.test", "127.0.0.4")
	p, paddr := startProxy(t, f, Rule{Host: "127.0.0.4/31", Port: port}, Rule{Host: "127.0.0.6/31", Port: outPort + 1})
	connect := func(host string, port uint16) int {
		c, err := net.Dial("tcp", paddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		hp := net.JoinHostPort(host, strconv.Itoa(int(port)))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatalf("CONNECT %s: %v", hp, err)
		}
		if resp.StatusCode == 200 {
			c.Write([]byte("ping\n"))
			if line, _ := br.ReadString('\n'); line != "echo ping\n" {
				t.Errorf("CONNECT %s: tunnel answered %q", hp, line)
			}
		}
		return resp.StatusCode
	}
	for _, c := range []struct {
		host   string
		port   uint16
		status int
	}{
		{"127.0.0.4", port, 200},
		{"::ffff:127.0.0.4", port, 200},
		{"127.0.0.3", port, 403},            // just below the range
		{"127.0.0.6", port, 403},            // just above
		{"127.0.0.4", port + 1, 403},        // wrong port
		{"inrange.example.test", port, 403}, // a name resolving into the range
		{"127.0.0.6", outPort, 403},         // the other range is on outPort+1
	} {
		before := len(p.Denied())
		if got := connect(c.host, c.port); got != c.status {
			t.Errorf("CONNECT %s:%d = %d, want %d", c.host, c.port, got, c.status)
		}
		if d := p.Denied(); c.status == 403 && (len(d) != before+1 || d[before].Reason != ReasonNotAllowed) {
			t.Errorf("CONNECT %s:%d: denials %+v, want one not-allowed", c.host, c.port, d[before:])
		}
	}
	if code := socksRequest(t, paddr, 1, 1, []byte{127, 0, 0, 4}, port); code != 0 {
		t.Errorf("SOCKS5 127.0.0.4:%d: reply %d, want 0", port, code)
	}
	if code := socksRequest(t, paddr, 1, 1, []byte{127, 0, 0, 6}, port); code != socksNotAllowed {
		t.Errorf("SOCKS5 127.0.0.6:%d: reply %d, want %d", port, code, socksNotAllowed)
	}
	if code := socksRequest(t, paddr, 1, 3, []byte("inrange.example.test"), port); code != socksNotAllowed {
		t.Errorf("SOCKS5 inrange.example.test:%d: reply %d, want %d", port, code, socksNotAllowed)
	}
	if n := in.n.Load(); n != 3 { // two CONNECTs, one SOCKS5
		t.Errorf("the server in the range accepted %d connections, want 3", n)
	}
	if n := out.n.Load(); n != 0 {
		t.Errorf("the server outside the range accepted %d connections, want 0", n)
	}
}

// A range rule on the transparent path: a direct connection to an address
// in the range is relayed to exactly that address; one outside it is
// reset, reaches nothing and is reported; the resolver answers no name for
// a range, even one that resolves into it.
func TestTransparentRange(t *testing.T) {
	f := newFakeNet(t)
	port, in := rangeServer(t, "127.0.0.4")
	f.Alias("inrange.example.test", "127.0.0.4")
	p, l := startTransparent(t, f, Rule{Host: "127.0.0.4/31", Port: port})
	ps := strconv.Itoa(int(port))
	for _, c := range []struct {
		dst     string
		relayed bool
	}{
		{"127.0.0.4:" + ps, true},
		{"[::ffff:127.0.0.4]:" + ps, true},
		{"127.0.0.3:" + ps, false},
		{"127.0.0.6:" + ps, false},
		{"[::1]:" + ps, false},
		{"127.0.0.4:" + strconv.Itoa(int(port)+1), false},
	} {
		before, dials := len(p.Denied()), f.Dials()
		got := exchange(l.connect(t, c.dst))
		if c.relayed {
			if got != "echo ping\n" {
				t.Errorf("%s: %q, want the echo", c.dst, got)
			}
			continue
		}
		if got != "" || f.Dials() != dials {
			t.Errorf("%s: %q, %d dials: want a reset and no dial", c.dst, got, f.Dials()-dials)
		}
		ap := netip.MustParseAddrPort(c.dst)
		if d := p.Denied(); len(d) != before+1 || d[before].Protocol != "tcp" || d[before].Host != ap.Addr().Unmap().String() ||
			d[before].Port != ap.Port() || d[before].Reason != ReasonNotAllowed {
			t.Errorf("%s: denials %+v, want tcp %s not-allowed", c.dst, d[before:], ap.Addr().Unmap())
		}
	}
	if n := in.n.Load(); n != 2 {
		t.Errorf("the server in the range accepted %d connections, want 2", n)
	}
	var m dnsmessage.Message
	if err := m.Unpack(p.answerDNS(context.Background(), dnsQuery(t, "inrange.example.test.", dnsmessage.TypeA))); err != nil {
		t.Fatal(err)
	}
	if m.RCode != dnsmessage.RCodeNameError || len(m.Answers) != 0 {
		t.Errorf("DNS for a name that resolves into the range: %v %d answers, want NXDOMAIN", m.RCode, len(m.Answers))
	}
}
