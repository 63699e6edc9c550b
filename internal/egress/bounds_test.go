package egress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// startProxyWith is startProxy with options (Allow, Resolve and Dial are
// filled in).
func startProxyWith(t testing.TB, f *fakeNet, o Options, rules ...Rule) (*Proxy, string) {
	t.Helper()
	a, err := NewAllowlist(rules)
	if err != nil {
		t.Fatal(err)
	}
	o.Allow, o.Resolve, o.Dial = a, f.Resolve, f.Dial
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(func() { p.Close() })
	return p, l.Addr().String()
}

// floodHead is a request head of about n bytes that never ends: a request
// line and then header fields with distinct names and values of size bytes
// (tiny fields are the shape that costs net/http's parser the most memory
// per byte).
func floodHead(target string, n, size int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET http://%s/ HTTP/1.1\r\n", target)
	for i := 0; b.Len() < n-size-16; i++ {
		fmt.Fprintf(&b, "k%d:%s\r\n", i, strings.Repeat("v", size))
	}
	return b.Bytes()
}

// sendHead writes head on a new connection to the proxy and returns the
// status of the proxy's answer (0 when there is none within the deadline)
// and the connection, still open.
func sendHead(t *testing.T, paddr string, head []byte, wait time.Duration) (int, string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go c.Write(head) // a refused head may be cut short: the write then fails
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error(), c
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(DeniedHeader), c
}

// waitDenials waits (up to 5 s) until p has recorded n refusals.
func waitDenials(t *testing.T, p *Proxy, n int) []Denial {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(p.Denied()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return p.Denied()
}

// TestProxyHeadBounds: a head longer than MaxHeaderBytes, one with more
// than MaxHeaderFields fields, and one begun and not ended within the
// handshake timeout are each answered with their status and recorded with
// their reason; a connection that sends nothing is closed unrecorded; a
// head just under the bounds is served.
func TestProxyHeadBounds(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("api.example.test", s.Listener.Addr().String())
	target := fmt.Sprintf("api.example.test:%d", port)
	p, paddr := startProxyWith(t, f, Options{HandshakeTimeout: 400 * time.Millisecond}, Rule{Host: "api.example.test", Port: port})

	fields := func(n, size int) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "GET http://%s/ok HTTP/1.1\r\nHost: %s\r\n", target, target)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "X-F%d: %s\r\n", i, strings.Repeat("v", size))
		}
		b.WriteString("\r\n")
		return b.Bytes()
	}
	for _, c := range []struct {
		name   string
		head   []byte
		status int
		reason string
	}{
		{"under the bounds", fields(DefaultMaxHeaderFields-1, 300), 200, ""},
		{"too long", fields(40, 1000), 431, ReasonTooLarge},
		{"too many fields", fields(DefaultMaxHeaderFields+1, 1), 431, ReasonTooLarge},
		{"never ends", []byte("GET http://" + target + "/ HTTP/1.1\r\nX-A: 1\r\n"), 408, ReasonTimeout},
	} {
		before := len(p.Denied())
		start := time.Now()
		status, denied, _ := sendHead(t, paddr, c.head, 3*time.Second)
		if status != c.status || denied != c.reason {
			t.Errorf("%s (%d bytes): answer %d %q, want %d %q", c.name, len(c.head), status, denied, c.status, c.reason)
		}
		if c.reason == ReasonTimeout && time.Since(start) < 300*time.Millisecond {
			t.Errorf("%s: answered after %v, before the 400 ms timeout", c.name, time.Since(start))
		}
		d := waitDenials(t, p, before+boolInt(c.reason != ""))
		if c.reason == "" {
			if len(d) != before {
				t.Errorf("%s: recorded %+v", c.name, d[before:])
			}
			continue
		}
		if len(d) != before+1 || d[before].Reason != c.reason || d[before].Protocol != "http" {
			t.Errorf("%s: recorded %+v, want one %s", c.name, d[before:], c.reason)
		}
	}

	// Nothing sent: closed at the timeout, nothing recorded.
	before := len(p.Denied())
	idle, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("idle connection: %v, want EOF after the handshake timeout", err)
	}
	if d := p.Denied(); len(d) != before {
		t.Errorf("idle connection recorded %+v", d[before:])
	}
	if n := p.budget.InUse(); n != 0 {
		t.Errorf("after every request ended, %d bytes of the budget are still taken", n)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestProxyConnectEarlyData: bytes a client sends after its CONNECT head
// without waiting for the 200 (more than one read buffer of them) all
// reach the destination, in order, through the replay of the head.
func TestProxyConnectEarlyData(t *testing.T) {
	f := newFakeNet(t)
	addr := serveTCP(t, func(c net.Conn) { io.Copy(c, c) })
	port := f.Host("echo.example.test", addr)
	_, paddr := startProxy(t, f, Rule{Host: "echo.example.test", Port: port})
	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	early := bytes.Repeat([]byte("0123456789abcdef"), 10<<10/16)
	head := fmt.Sprintf("CONNECT echo.example.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", port)
	go c.Write(append([]byte(head), early...))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	got := make([]byte, len(early))
	if _, err := io.ReadFull(br, got); err != nil || !bytes.Equal(got, early) {
		t.Errorf("early data echoed: %v, equal %v", err, bytes.Equal(got, early))
	}
}

// TestProxyMaxConns: past MaxConns a connection is refused at once with
// 503 (HTTP) or a general failure (SOCKS5) and recorded as proxy-busy;
// once a slot is free again, a request is served.
func TestProxyMaxConns(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("echo.example.test", s.Listener.Addr().String())
	p, paddr := startProxyWith(t, f, Options{MaxConns: 1, HandshakeTimeout: 500 * time.Millisecond}, Rule{Host: "echo.example.test", Port: port})

	idle, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	time.Sleep(50 * time.Millisecond) // the idle connection takes the only slot
	url := fmt.Sprintf("http://echo.example.test:%d/", port)
	resp, err := proxyClient(paddr).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get(DeniedHeader) != ReasonBusy {
		t.Errorf("second connection: %d %q, want 503 %q", resp.StatusCode, resp.Header.Get(DeniedHeader), ReasonBusy)
	}
	// SOCKS5: greeting answered, then a general failure.
	sc, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sc.Write(append([]byte{5, 1, 0, 5, 1, 0, 3, 17}, append([]byte("echo.example.test"), byte(port>>8), byte(port))...))
	sc.SetReadDeadline(time.Now().Add(3 * time.Second))
	reply := make([]byte, 12)
	if _, err := io.ReadFull(sc, reply); err != nil || reply[3] != socksFailure {
		t.Errorf("SOCKS5 past MaxConns: %v %x, want reply code %d", err, reply, socksFailure)
	}
	d := waitDenials(t, p, 2)
	if len(d) != 2 || d[0].Reason != ReasonBusy || d[0].Protocol != "http" || d[0].Host != "echo.example.test:"+fmt.Sprint(port) ||
		d[1].Reason != ReasonBusy || d[1].Protocol != "socks5" || d[1].Host != "echo.example.test" {
		t.Errorf("recorded %+v, want two proxy-busy refusals", d)
	}
	// The idle connection times out and frees its slot.
	idle.SetReadDeadline(time.Now().Add(3 * time.Second))
	idle.Read(make([]byte, 1))
	resp, err = proxyClient(paddr).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the idle connection ended: %d, want 200", resp.StatusCode)
	}
}

// TestProxyBudget: heads under MaxHeaderBytes but never ended hold their
// bytes; once they hold MaxBufferedBytes, the next request is refused with
// 503 proxy-busy; when they end, the bytes are given back and a request is
// served.
func TestProxyBudget(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("echo.example.test", s.Listener.Addr().String())
	target := fmt.Sprintf("echo.example.test:%d", port)
	p, paddr := startProxyWith(t, f, Options{MaxBufferedBytes: 64 << 10}, Rule{Host: "echo.example.test", Port: port})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", paddr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		c.Write(floodHead(target, 30<<10, 1000))
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.budget.InUse() < int64(2*len(floodHead(target, 30<<10, 1000))) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	status, denied, _ := sendHead(t, paddr, floodHead(target, 30<<10, 1000), 3*time.Second)
	if status != 503 || denied != ReasonBusy {
		t.Errorf("third head with %d of %d bytes taken: %d %q, want 503 %q", p.budget.InUse(), p.budget.Size(), status, denied, ReasonBusy)
	}
	if d := waitDenials(t, p, 1); len(d) != 1 || d[0].Reason != ReasonBusy {
		t.Errorf("recorded %+v, want one proxy-busy", d)
	}
	for _, c := range held {
		c.Close()
	}
	for p.budget.InUse() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := proxyClient(paddr).Get("http://" + target + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The request's head is given back once the proxy has written the
	// answer, which the client may read first: wait for it, bounded.
	for end := time.Now().Add(2 * time.Second); p.budget.InUse() != 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if resp.StatusCode != 200 || p.budget.InUse() != 0 {
		t.Errorf("after the heads ended: %d, %d bytes taken; want 200 and none", resp.StatusCode, p.budget.InUse())
	}
}

// TestProxyHeadFloodBounded: 32 connections each send 1 MiB of tiny
// header fields and never end the head (the reproduction of issue 27,
// which cost ~14 MiB of the caller's heap per connection), then 64 send
// heads just under MaxHeaderBytes and hold them: the proxy's heap grows by
// a few MiB at most, and every connection is refused with its reason.
func TestProxyHeadFloodBounded(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("echo.example.test", s.Listener.Addr().String())
	target := fmt.Sprintf("echo.example.test:%d", port)
	p, paddr := startProxyWith(t, f, Options{}, Rule{Host: "echo.example.test", Port: port})
	big, under := floodHead(target, 1<<20-4096, 0), floodHead(target, DefaultMaxHeaderBytes-1024, 1000)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	var conns []net.Conn
	var wg sync.WaitGroup
	flood := func(n int, head []byte) {
		for range n {
			c, err := net.Dial("tcp", paddr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			wg.Add(1)
			go func() { defer wg.Done(); c.Write(head) }()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the flood's writes did not end within 20 s")
		}
	}
	flood(32, big)
	waitDenials(t, p, 32) // before the next wave takes the budget
	flood(64, under)
	time.Sleep(200 * time.Millisecond) // let the proxy read what was sent
	during := heap()
	runtime.KeepAlive(big) // live in both measurements: the flood's own buffers are not the proxy's
	runtime.KeepAlive(under)
	grew := int64(during) - int64(before)
	t.Logf("proxy heap: %d KiB before, %d KiB during the flood (%+d KiB), %d KiB of request heads held",
		before>>10, during>>10, grew>>10, p.budget.InUse()>>10)
	if grew > 8<<20 {
		t.Errorf("the flood grew the caller's heap by %d KiB, want at most 8 MiB", grew>>10)
	}
	for _, c := range conns {
		c.Close()
	}
	var large, busy int
	for _, d := range p.Denied() {
		switch d.Reason {
		case ReasonTooLarge:
			large++
		case ReasonBusy:
			busy++
		}
	}
	if large != 32 || busy == 0 {
		t.Errorf("recorded %d request-too-large (want 32) and %d proxy-busy (want some: 64 heads of %d bytes exceed the %d-byte budget)",
			large, busy, len(under), DefaultMaxBufferedBytes)
	}
}

// TestProxyPipelined: requests sent back to back in one write, the first
// with a body longer than the read buffer, are each served in order: the
// replay of one head keeps the bytes of the next.
func TestProxyPipelined(t *testing.T) {
	f := newFakeNet(t)
	s, _ := echoServer(t)
	port := f.Host("echo.example.test", s.Listener.Addr().String())
	_, paddr := startProxy(t, f, Rule{Host: "echo.example.test", Port: port})
	c, err := net.Dial("tcp", paddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := strings.Repeat("b", 6000)
	var reqs bytes.Buffer
	for i := range 3 {
		fmt.Fprintf(&reqs, "POST http://echo.example.test:%d/%d HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", port, i, len(body), body)
	}
	go c.Write(reqs.Bytes())
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	for i := range 3 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("POST echo.example.test:%d /%d %s", port, i, body); string(got) != want {
			t.Errorf("response %d: %.60q..., want %.60q...", i, got, want)
		}
	}
}

// TestReadRequestKeepsReplay: a head read whole while the replay still
// holds bytes past it (a pipelined request that the read buffer had not
// taken yet) loses none of them.
func TestReadRequestKeepsReplay(t *testing.T) {
	p := &Proxy{maxHead: DefaultMaxHeaderBytes, maxFields: DefaultMaxHeaderFields}
	rp := &replay{r: strings.NewReader(""),
		head: []byte("GET http://a.example.test/first HTTP/1.1\r\nHost: a\r\n\r\nGET http://b.example.test/second HTTP/1.1\r\nHost: b\r\n\r\n")}
	br := bufio.NewReaderSize(rp, 16) // takes the replay 16 bytes at a time
	for _, want := range []string{"/first", "/second"} {
		req, err := p.readRequest(br, rp)
		if err != nil || req.URL.Path != want {
			t.Fatalf("readRequest: %v %v, want %s", req, err, want)
		}
	}
}
