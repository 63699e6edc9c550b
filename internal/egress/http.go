package egress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"
)

// serveHTTP serves HTTP proxy requests on c: a CONNECT turns the connection
// into a relay; absolute-URI requests are forwarded one by one, keeping the
// client connection alive between them when both sides allow it. With busy
// set (the connection came past MaxConns) the first request is read only to
// be refused with 503.
//
// Each request's head is read under the bounds (see [Options]); its bytes
// stay charged to the sandbox's budget until it is answered, or until a
// CONNECT becomes a relay.
func (p *Proxy) serveHTTP(c net.Conn, br *bufio.Reader, rp *replay, m *meter, busy *Denial) {
	for first := true; ; first = false {
		if !first {
			c.SetReadDeadline(time.Now().Add(p.handshake))
			m.startHead(p.maxHead)
		}
		req, err := p.readRequest(br, rp)
		if err != nil {
			p.refuseHead(c, "http", m, err, nil)
			return
		}
		m.endHead()
		c.SetReadDeadline(time.Time{})
		if busy != nil {
			busy.Protocol, busy.Host = "http", req.Host
			if req.Method == http.MethodConnect {
				busy.Protocol = "connect"
			}
			p.deny(*busy)
			writeRefusal(c, http.StatusServiceUnavailable, busy.Reason, busy.Detail)
			return
		}
		if req.Method == http.MethodConnect {
			m.release()
			p.serveConnect(c, br, rp, req)
			return
		}
		keep := p.forward(c, req)
		m.release()
		if !keep {
			return
		}
	}
}

// readRequest reads one request head whole, as bytes, before parsing it:
// a head that never ends (the flood of tiny header lines that costs
// net/http's parser over ten times its size in maps and strings) costs the
// caller its bytes only, under MaxHeaderBytes and the budget, and a head of
// more than MaxHeaderFields lines is refused before it is parsed. The
// complete head is then replayed into http.ReadRequest through rp, followed
// by what br had read beyond it (a body, a pipelined request).
func (p *Proxy) readRequest(br *bufio.Reader, rp *replay) (*http.Request, error) {
	var head []byte
	lines, partial := 0, false
	for {
		line, err := br.ReadSlice('\n')
		if int64(len(head)+len(line)) > p.maxHead {
			return nil, errHeadTooLarge
		}
		head = append(head, line...)
		if err == bufio.ErrBufferFull {
			partial = true // a line longer than br's buffer: its rest follows
			continue
		}
		if err != nil {
			return nil, err
		}
		end := !partial && (len(line) == 1 || len(line) == 2 && line[0] == '\r')
		partial = false
		if end {
			break // the empty line that ends the head (or an empty request line, which ReadRequest refuses)
		}
		if lines++; lines > p.maxFields+1 { // the request line and the fields
			return nil, errTooManyFields
		}
	}
	// Replay: the head, what br holds past it, and what rp still held
	// that br had not taken yet (a pipelined request's bytes).
	rp.head = slices.Concat(head, peekBuffered(br), rp.head)
	br.Reset(rp)
	return http.ReadRequest(br)
}

// serveConnect answers "CONNECT host:port": 200 and a relay when allowed.
func (p *Proxy) serveConnect(c net.Conn, br *bufio.Reader, rp *replay, req *http.Request) {
	host, port, err := splitHostPort(req.RequestURI)
	if err != nil {
		p.deny(Denial{Protocol: "connect", Reason: ReasonMalformed, Detail: fmt.Sprintf("CONNECT %q: %v", req.RequestURI, err)})
		writeRefusal(c, http.StatusBadRequest, ReasonMalformed, "CONNECT wants host:port")
		return
	}
	u, d, err := p.dialChecked(p.ctx, "connect", host, port)
	if d != nil {
		writeRefusal(c, http.StatusForbidden, d.Reason, d.Detail)
		return
	}
	if err != nil {
		writeGatewayError(c, err)
		return
	}
	defer p.untrack(u)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// A client may send its first bytes (a TLS ClientHello) without
	// waiting for the 200; they are read already: in br, and what br has
	// not yet taken of the replayed head's tail, in rp.
	for _, b := range [][]byte{peekBuffered(br), rp.head} {
		if _, err := u.Write(b); err != nil {
			return
		}
	}
	rp.head = nil
	relay(c, u)
}

// forward sends one absolute-URI request to its destination over a new
// connection and copies the response back. It returns whether the client
// connection may carry another request.
//
// A refused request is not drained: its connection is closed instead.
func (p *Proxy) forward(c net.Conn, req *http.Request) (keepAlive bool) {
	if req.URL.Scheme == "" || req.URL.Host == "" {
		p.deny(Denial{Protocol: "http", Reason: ReasonMalformed,
			Detail: fmt.Sprintf("%s %q is not an absolute URI: this is a proxy, a request must name its destination", req.Method, req.RequestURI)})
		writeRefusal(c, http.StatusBadRequest, ReasonMalformed, "not a proxy request (absolute URI or CONNECT expected)")
		return false
	}
	host := req.URL.Hostname()
	port := uint16(80)
	if strings.EqualFold(req.URL.Scheme, "https") {
		port = 443
	}
	if ps := req.URL.Port(); ps != "" {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			p.deny(Denial{Protocol: "http", Host: host, Reason: ReasonMalformed, Detail: fmt.Sprintf("bad port %q", ps)})
			writeRefusal(c, http.StatusBadRequest, ReasonMalformed, "bad port")
			return false
		}
		port = uint16(n)
	}
	if !strings.EqualFold(req.URL.Scheme, "http") {
		p.deny(Denial{Protocol: "http", Host: host, Port: port, Reason: ReasonUnsupported,
			Detail: fmt.Sprintf("scheme %q: only http:// is forwarded; https goes through CONNECT", req.URL.Scheme)})
		writeRefusal(c, http.StatusBadRequest, ReasonUnsupported, "only http:// URIs are forwarded; use CONNECT for https")
		return false
	}
	u, d, err := p.dialChecked(p.ctx, "http", host, port)
	if d != nil {
		writeRefusal(c, http.StatusForbidden, d.Reason, d.Detail)
		return false
	}
	if err != nil {
		writeGatewayError(c, err)
		return false
	}
	defer p.untrack(u)

	clientClose := req.Close
	removeHopByHop(req.Header)
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		req.Header.Del("Expect")
		if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false
		}
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // do not add Go's
	}
	req.Close = true // one destination connection per request
	if err := req.Write(u); err != nil {
		writeGatewayError(c, err)
		return false
	}
	ubr := bufio.NewReader(u)
	resp, err := http.ReadResponse(ubr, req)
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(ubr, req) // interim answers: the client was already told to continue
	}
	if err != nil {
		writeGatewayError(c, err)
		return false
	}
	defer resp.Body.Close()
	removeHopByHop(resp.Header)
	bodyless := req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	closeAfter := clientClose || resp.StatusCode == http.StatusSwitchingProtocols ||
		(!bodyless && resp.ContentLength < 0 && !isChunked(resp.TransferEncoding)) ||
		(req.ProtoMajor == 1 && req.ProtoMinor == 0)
	resp.Close = closeAfter
	if req.ProtoMajor == 1 && req.ProtoMinor == 0 && isChunked(resp.TransferEncoding) {
		resp.TransferEncoding, resp.ContentLength = nil, -1 // an HTTP/1.0 client reads to EOF
	}
	if !bodyless && resp.ContentLength > 0 && len(resp.TransferEncoding) == 0 && resp.StatusCode != http.StatusSwitchingProtocols {
		return writeFixedLength(c, resp, ubr, u, closeAfter) && !closeAfter
	}
	if err := resp.Write(c); err != nil {
		return false
	}
	return !closeAfter
}

// writeFixedLength answers with resp, whose body is resp.ContentLength
// bytes, as resp.Write would, but copies the body from the destination's
// connection u straight to the client's connection c (after what ubr
// already read of it): for two TCP connections the kernel then moves the
// bytes itself (splice), which is most of a download's cost through the
// proxy. It reports whether the whole answer was written; a destination
// that sends less ends the client connection (a short body is visible as
// such, never as a complete one).
func writeFixedLength(c net.Conn, resp *http.Response, ubr *bufio.Reader, u net.Conn, closeAfter bool) bool {
	h := resp.Header.Clone()
	h.Del("Content-Length") // written below, from what was parsed
	text := strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)+" ")
	if text == "" {
		text = http.StatusText(resp.StatusCode)
	}
	var head bytes.Buffer
	fmt.Fprintf(&head, "HTTP/%d.%d %03d %s\r\n", resp.ProtoMajor, resp.ProtoMinor, resp.StatusCode, text)
	if err := h.Write(&head); err != nil {
		return false
	}
	fmt.Fprintf(&head, "Content-Length: %d\r\n", resp.ContentLength)
	if closeAfter {
		head.WriteString("Connection: close\r\n")
	}
	head.WriteString("\r\n")
	buffered, _ := ubr.Peek(int(min(int64(ubr.Buffered()), resp.ContentLength)))
	head.Write(buffered)
	if _, err := c.Write(head.Bytes()); err != nil {
		return false
	}
	rest := resp.ContentLength - int64(len(buffered))
	n, err := io.Copy(c, io.LimitReader(u, rest))
	return err == nil && n == rest
}

// peekBuffered returns what br holds, without consuming it.
func peekBuffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

func isChunked(te []string) bool { return len(te) > 0 && te[0] == "chunked" }

// hopByHop are the headers that belong to one connection, not the request.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopByHop {
		h.Del(k)
	}
}

// writeRefusal answers a refused request. The reason goes in DeniedHeader;
// the detail, which may quote the request, only in the body.
func writeRefusal(w io.Writer, status int, reason, detail string) {
	body := "sandbox: " + detail + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\n%s: %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), DeniedHeader, reason, len(body), body)
}

// writeGatewayError answers an allowed request whose destination could not
// be resolved or reached: 502, without DeniedHeader (the sandbox did not
// refuse it).
func writeGatewayError(w io.Writer, err error) {
	body := "sandbox proxy: " + err.Error() + "\n"
	fmt.Fprintf(w, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// splitHostPort splits a CONNECT authority; the port is required.
func splitHostPort(s string) (string, uint16, error) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("bad port %q", ps)
	}
	return host, uint16(n), nil
}
