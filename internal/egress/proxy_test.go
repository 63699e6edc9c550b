package egress

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// echoServer answers every request with its method, Host and body, and
// counts the connections it accepted.
func echoServer(t testing.TB) (*httptest.Server, *countingListener) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Host, r.URL.Path, body)
	}))
	cl := &countingListener{Listener: s.Listener}
	s.Listener = cl
	s.Start()
	t.Cleanup(s.Close)
	return s, cl
}

func proxyClient(proxyAddr string) *http.Client {
	u := &url.URL{Scheme: "http", Host: proxyAddr}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableCompression: true}, Timeout: 10 * time.Second}
}

func TestHTTPForward(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("api.example.test", s.Listener.Addr().String())
	_, paddr := startProxy(t, f, Rule{Host: "api.example.test", Port: port})
	c := proxyClient(paddr)
	defer c.CloseIdleConnections()
	base := fmt.Sprintf("http://api.example.test:%d", port)

	for i, req := range []func() (*http.Response, error){
		func() (*http.Response, error) { return c.Get(base + "/a") },
		func() (*http.Response, error) {
			return c.Post(base+"/b", "text/plain", strings.NewReader("payload"))
		},
		func() (*http.Response, error) { // chunked request body
			return c.Post(base+"/c", "text/plain", io.MultiReader(strings.NewReader("chu"), strings.NewReader("nked")))
		},
	} {
		resp, err := req()
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := []string{"GET api.example.test:%d /a ", "POST api.example.test:%d /b payload", "POST api.example.test:%d /c chunked"}[i]
		if resp.StatusCode != 200 || string(body) != fmt.Sprintf(want, port) {
			t.Errorf("request %d: %d %q, want 200 %q", i, resp.StatusCode, body, fmt.Sprintf(want, port))
		}
	}
}

// TestHTTPKeepAlive sends two requests on one client connection by hand and
// reads both answers from it.
func TestHTTPKeepAlive(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("api.example.test", s.Listener.Addr().String())
	_, paddr := startProxy(t, f, Rule{Host: "api.example.test", Port: port})
	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 2 {
		fmt.Fprintf(c, "POST http://api.example.test:%d/k%d HTTP/1.1\r\nHost: api.example.test:%d\r\nContent-Length: 2\r\nProxy-Connection: keep-alive\r\n\r\nhi", port, i, port)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if want := fmt.Sprintf("POST api.example.test:%d /k%d hi", port, i); string(body) != want || resp.Close {
			t.Errorf("response %d: %q close=%v, want %q on a kept-alive connection", i, body, resp.Close, want)
		}
	}
	// The Host header does not pick the destination's virtual host: the
	// checked URI does (RFC 9112 §3.2.2), so an allowed address cannot be
	// asked for another site it also serves.
	fmt.Fprintf(c, "GET http://api.example.test:%d/vhost HTTP/1.1\r\nHost: evil.example.test\r\n\r\n", port)
	if resp, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	} else if body, _ := io.ReadAll(resp.Body); string(body) != fmt.Sprintf("GET api.example.test:%d /vhost ", port) {
		t.Errorf("Host header override: the destination saw %q", body)
	}
	// An HTTP/1.0 request without keep-alive: the proxy answers and closes.
	fmt.Fprintf(c, "GET http://api.example.test:%d/old HTTP/1.0\r\n\r\n", port)
	rest, err := io.ReadAll(br)
	if err != nil || !bytes.Contains(rest, []byte("GET api.example.test:")) {
		t.Errorf("HTTP/1.0: %q, %v", rest, err)
	}
}

func TestConnectTLS(t *testing.T) {
	f := newFakeNet(t)
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %s", r.Host)
	}))
	defer s.Close()
	port := f.Host("secure.example.test", s.Listener.Addr().String())
	_, paddr := startProxy(t, f, Rule{Host: "secure.example.test", Port: port})
	tr := s.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: paddr})
	tr.TLSClientConfig.ServerName = "example.com" // httptest's certificate names example.com
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	resp, err := c.Get(fmt.Sprintf("https://secure.example.test:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("tls secure.example.test:%d", port); string(body) != want {
		t.Errorf("got %q, want %q", body, want)
	}
}

// halfCloseServer reads until EOF, then answers with what it read, so a
// relay that does not pass a client's shutdown(SHUT_WR) on hangs.
func halfCloseServer(t testing.TB) string {
	return serveTCP(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		fmt.Fprintf(c, "got %d bytes: %s", len(b), b)
	})
}

func TestConnectHalfClose(t *testing.T) {
	f := newFakeNet(t)
	port := f.Host("half.example.test", halfCloseServer(t))
	_, paddr := startProxy(t, f, Rule{Host: "half.example.test", Port: port})
	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// The request and the first payload bytes in one write: the proxy must
	// pass on what it read past the request.
	fmt.Fprintf(c, "CONNECT half.example.test:%d HTTP/1.1\r\nHost: half.example.test:%d\r\n\r\nhello ", port, port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, "world")
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(br)
	if err != nil || string(got) != "got 11 bytes: hello world" {
		t.Errorf("after half-close: %q, %v", got, err)
	}
}

func TestSOCKS5(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("socks.example.test", s.Listener.Addr().String())
	s6 := httptest.NewUnstartedServer(s.Config.Handler)
	l6, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here (%v): the IPv6 case needs ::1", err)
	}
	s6.Listener = l6
	s6.Start()
	defer s6.Close()
	port6 := uint16(l6.Addr().(*net.TCPAddr).Port)
	_, paddr := startProxy(t, f, Rule{Host: "socks.example.test", Port: port}, Rule{Host: "127.0.0.1", Port: port}, Rule{Host: "::1", Port: port6})

	for _, target := range []string{
		fmt.Sprintf("socks.example.test:%d", port), // ATYP 3, resolved by the proxy
		s.Listener.Addr().String(),                 // ATYP 1
		l6.Addr().String(),                         // ATYP 4
	} {
		d, err := proxy.SOCKS5("tcp", paddr, nil, proxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{Dial: d.Dial}
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + target + "/s")
		if err != nil {
			t.Errorf("SOCKS5 to %s: %v", target, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if want := "GET " + target + " /s "; string(body) != want {
			t.Errorf("SOCKS5 to %s: %q, want %q", target, body, want)
		}
	}
}

// socksRequest sends a SOCKS5 greeting and request by hand and returns the
// reply code, or -1 when the proxy closed without one.
func socksRequest(t *testing.T, paddr string, cmd byte, atyp byte, addr []byte, port uint16) int {
	t.Helper()
	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := []byte{5, 1, 0, 5, cmd, 0, atyp}
	if atyp == 3 {
		msg = append(msg, byte(len(addr)))
	}
	msg = append(msg, addr...)
	msg = binary.BigEndian.AppendUint16(msg, port)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 2+10)
	n, _ := io.ReadFull(c, reply)
	if n < 2 || reply[0] != 5 || reply[1] != 0 {
		t.Fatalf("method selection: %x", reply[:n])
	}
	if n < 4 {
		return -1
	}
	return int(reply[3])
}

func TestSOCKS5Refusals(t *testing.T) {
	f := newFakeNet(t)
	s, upstream := echoServer(t)
	port := f.Host("socks.example.test", s.Listener.Addr().String())
	f.Alias("rebind.example.test", "127.0.0.1")
	p, paddr := startProxy(t, f, Rule{Host: "socks.example.test", Port: port}, Rule{Host: "rebind.example.test", Port: port}, Rule{Host: "nowhere.example.test", Port: port})
	for _, c := range []struct {
		name   string
		cmd    byte
		atyp   byte
		addr   []byte
		port   uint16
		code   int
		reason string
	}{
		{"name not listed", 1, 3, []byte("evil.example.test"), port, socksNotAllowed, ReasonNotAllowed},
		{"port not listed", 1, 3, []byte("socks.example.test"), port + 1, socksNotAllowed, ReasonNotAllowed},
		{"IPv4 not listed", 1, 1, []byte{127, 0, 0, 1}, port, socksNotAllowed, ReasonNotAllowed},
		{"rebinding", 1, 3, []byte("rebind.example.test"), port, socksNotAllowed, ReasonNonPublic},
		{"bad name", 1, 3, []byte("a b\x00"), port, socksNotAllowed, ReasonMalformed},
		{"BIND", 2, 3, []byte("socks.example.test"), port, socksCmdUnsupported, ReasonUnsupported},
		{"UDP ASSOCIATE", 3, 3, []byte("socks.example.test"), port, socksCmdUnsupported, ReasonUnsupported},
		{"address type 9", 1, 9, nil, port, socksAddrUnsupported, ReasonMalformed},
		{"unresolvable", 1, 3, []byte("nowhere.example.test"), port, socksHostUnreachable, ""},
	} {
		before := len(p.Denied())
		if got := socksRequest(t, paddr, c.cmd, c.atyp, c.addr, c.port); got != c.code {
			t.Errorf("%s: reply %#x, want %#x", c.name, got, c.code)
		}
		d := p.Denied()[before:]
		switch {
		case c.reason == "" && len(d) != 0:
			t.Errorf("%s: recorded %+v, want nothing (the destination failed, the sandbox did not refuse)", c.name, d)
		case c.reason != "" && (len(d) != 1 || d[0].Reason != c.reason || d[0].Protocol != "socks5"):
			t.Errorf("%s: recorded %+v, want one socks5 %s", c.name, d, c.reason)
		}
	}
	if n := upstream.n.Load(); n != 0 {
		t.Errorf("the server was reached %d times by refused requests", n)
	}
	// What a confined program sends is recorded printable only: a name
	// with terminal escapes cannot reach the caller's terminal.
	socksRequest(t, paddr, 2, 3, []byte("a\x1b[2J\xff.example.test"), port)
	d := p.Denied()
	if h := d[len(d)-1].Host; h != "a?[2J?.example.test" {
		t.Errorf("recorded host %q, want control characters and invalid UTF-8 replaced", h)
	}
}

func TestHTTPRefusals(t *testing.T) {
	f := newFakeNet(t)
	s, upstream := echoServer(t)
	port := f.Host("api.example.test", s.Listener.Addr().String())
	f.Alias("rebind.example.test", "127.0.0.1", "10.0.0.1", "::1")
	p, paddr := startProxy(t, f, Rule{Host: "api.example.test", Port: port}, Rule{Host: "rebind.example.test", Port: port})
	for _, c := range []struct {
		name, request string
		status        int
		reason        string
		host          string
	}{
		{"GET not listed", "GET http://evil.example.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", 403, ReasonNotAllowed, "evil.example.test"},
		{"CONNECT not listed", "CONNECT evil.example.test:%d HTTP/1.1\r\n\r\n", 403, ReasonNotAllowed, "evil.example.test"},
		{"CONNECT loopback literal", "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", 403, ReasonNotAllowed, "127.0.0.1"},
		{"GET rebinding", "GET http://rebind.example.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", 403, ReasonNonPublic, "rebind.example.test"},
		{"CONNECT rebinding", "CONNECT rebind.example.test:%d HTTP/1.1\r\n\r\n", 403, ReasonNonPublic, "rebind.example.test"},
		{"origin-form", "GET /%d HTTP/1.1\r\nHost: api.example.test\r\n\r\n", 400, ReasonMalformed, ""},
		{"https URI", "GET https://api.example.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, ReasonUnsupported, "api.example.test"},
		{"garbage", "\x16\x03\x01%d\r\n\r\n", 400, ReasonMalformed, ""},
	} {
		before := len(p.Denied())
		conn, err := net.Dial("tcp", paddr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, c.request, port)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if resp.StatusCode != c.status || resp.Header.Get(DeniedHeader) != c.reason {
			t.Errorf("%s: %d %s=%q, want %d %q", c.name, resp.StatusCode, DeniedHeader, resp.Header.Get(DeniedHeader), c.status, c.reason)
		}
		d := p.Denied()[before:]
		if len(d) != 1 || d[0].Reason != c.reason || d[0].Host != c.host || d[0].Time.IsZero() || d[0].Detail == "" {
			t.Errorf("%s: recorded %+v, want one %s for %q", c.name, d, c.reason, c.host)
		} else if c.host != "" && d[0].Port != port {
			t.Errorf("%s: recorded port %d, want %d", c.name, d[0].Port, port)
		}
	}
	if n := upstream.n.Load(); n != 0 {
		t.Errorf("the server was reached %d times by refused requests", n)
	}
	// An allowed name whose answer mixes public and non-public addresses is
	// connected to a public one only.
	f.Host("mixed.example.test", s.Listener.Addr().String())
	f.Alias("mixed.example.test", "127.0.0.1")
	_, paddr = startProxy(t, f, Rule{Host: "mixed.example.test", Port: port})
	resp, err := proxyClient(paddr).Get(fmt.Sprintf("http://mixed.example.test:%d/", port))
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("mixed answer: %v %v", resp, err)
	}
}

func TestGatewayErrorIsNotADenial(t *testing.T) {
	f := newFakeNet(t)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().String()
	l.Close() // nothing listens there now: ECONNREFUSED
	port := f.Host("down.example.test", dead)
	p, paddr := startProxy(t, f, Rule{Host: "down.example.test", Port: port})
	resp, err := proxyClient(paddr).Get(fmt.Sprintf("http://down.example.test:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 || resp.Header.Get(DeniedHeader) != "" || len(p.Denied()) != 0 {
		t.Errorf("unreachable allowed host: %d %q, denials %v; want 502 without %s and no denial", resp.StatusCode, resp.Header.Get(DeniedHeader), p.Denied(), DeniedHeader)
	}
}

func TestDenialsBounded(t *testing.T) {
	a, _ := NewAllowlist(nil)
	var seen int
	p, _ := New(Options{Allow: a, MaxDenials: 3, OnDeny: func(Denial) { seen++ }})
	for i := range 5 {
		p.dialChecked(context.Background(), "http", fmt.Sprintf("h%d.example.test", i), 80)
	}
	if d := p.Denied(); len(d) != 3 || d[0].Host != "h0.example.test" || p.Dropped() != 2 || seen != 5 {
		t.Errorf("Denied=%v Dropped=%d OnDeny calls=%d, want the first 3, 2 dropped, 5 calls", d, p.Dropped(), seen)
	}
	p.Close()
}

func TestNewNeedsAllowlist(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without an allowlist succeeded")
	}
}

// TestHTTPFixedLengthBody: an answer with a Content-Length reaches the
// client whole (headers as the destination sent them, the body byte for
// byte, several MB so that most of it is copied after the headers), twice
// on one kept-alive client connection; a destination that sends less than
// it announced ends the client connection, so the body shows up short,
// never as complete.
func TestHTTPFixedLengthBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "kept")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	}))
	defer s.Close()
	short := serveTCP(t, func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
	})
	f := newFakeNet(t)
	port := f.Host("bulk.example.test", s.Listener.Addr().String())
	sport := f.Host("short.example.test", short)
	_, paddr := startProxy(t, f, Rule{Host: "bulk.example.test", Port: port}, Rule{Host: "short.example.test", Port: sport})

	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := range 2 {
		fmt.Fprintf(c, "GET http://bulk.example.test:%d/%d HTTP/1.1\r\nHost: bulk.example.test\r\n\r\n", port, i)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, body) || resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Test") != "kept" || resp.Close {
			t.Fatalf("response %d: %d, %d of %d bytes (equal %v), X-Test %q, close %v, err %v",
				i, resp.StatusCode, len(got), len(body), bytes.Equal(got, body), resp.Header.Get("X-Test"), resp.Close, err)
		}
	}

	fmt.Fprintf(c, "GET http://short.example.test:%d/ HTTP/1.1\r\nHost: short.example.test\r\n\r\n", sport)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if err == nil || len(got) >= 100 {
		t.Errorf("a short body came through as %d bytes, err %v: want fewer than 100 and an error", len(got), err)
	}
}

// TestProxyRefusesOwnAddress: an allowed name that resolves to an address
// of the caller's own interfaces (injected: the test adds none to the
// machine) is refused before anything is dialled, as is every name when
// the interface list cannot be read; an IP literal rule for that address
// is served.
func TestProxyRefusesOwnAddress(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("api.example.test", s.Listener.Addr().String())
	own, _ := f.Resolve(context.Background(), "api.example.test") // the fake public address stands for one of ours
	ownErr := error(nil)
	local := func() ([]netip.Addr, error) { return own, ownErr }
	a, _ := NewAllowlist([]Rule{{Host: "api.example.test", Port: port}, {Host: "lit.example.test", Port: port}})
	p, _ := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial, LocalAddrs: local})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go p.Serve(l)
	defer p.Close()
	get := func(host string) (int, string) {
		resp, err := proxyClient(l.Addr().String()).Get(fmt.Sprintf("http://%s:%d/", host, port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get(DeniedHeader)
	}
	if st, why := get("api.example.test"); st != 403 || why != ReasonNonPublic || f.Dials() != 0 {
		t.Errorf("name resolving to the caller's own address: %d %q after %d dials, want 403 %q and none", st, why, f.Dials(), ReasonNonPublic)
	}
	if d := p.Denied(); len(d) != 1 || !strings.Contains(d[0].Detail, "own interfaces") {
		t.Errorf("recorded %+v, want one refusal naming the caller's own interfaces", d)
	}
	ownErr, own = errors.New("netlink refused"), nil
	f.Host("lit.example.test", s.Listener.Addr().String())
	if st, why := get("lit.example.test"); st != 403 || why != ReasonNonPublic || f.Dials() != 0 {
		t.Errorf("interface list unreadable: %d %q after %d dials, want 403 %q and none", st, why, f.Dials(), ReasonNonPublic)
	}

	// An IP literal rule names the address: served.
	lit, _ := f.Resolve(context.Background(), "api.example.test")
	own, ownErr = lit, nil
	a2, _ := NewAllowlist([]Rule{{Host: lit[0].String(), Port: port}})
	p2, _ := New(Options{Allow: a2, Resolve: f.Resolve, Dial: f.Dial, LocalAddrs: local})
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	go p2.Serve(l2)
	defer p2.Close()
	resp, err := proxyClient(l2.Addr().String()).Get(fmt.Sprintf("http://%s:%d/", lit[0], port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("IP literal rule for the caller's own address: %d, want 200", resp.StatusCode)
	}
}
