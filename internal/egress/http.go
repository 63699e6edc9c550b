package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

// serveHTTP serves HTTP proxy requests on c: a CONNECT turns the connection
// into a relay; absolute-URI requests are forwarded one by one, keeping the
// client connection alive between them when both sides allow it.
func (p *Proxy) serveHTTP(c net.Conn, br *bufio.Reader, lr *io.LimitedReader) {
	for {
		c.SetReadDeadline(time.Now().Add(p.handshake))
		lr.N = maxHeader
		req, err := http.ReadRequest(br)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
				return // the client went away or idled out between requests
			}
			p.deny(Denial{Protocol: "http", Reason: ReasonMalformed, Detail: "unreadable HTTP request: " + err.Error()})
			writeRefusal(c, http.StatusBadRequest, ReasonMalformed, "unreadable HTTP request")
			return
		}
		lr.N = math.MaxInt64
		c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			p.serveConnect(c, br, req)
			return
		}
		if !p.forward(c, req) {
			return
		}
	}
}

// serveConnect answers "CONNECT host:port": 200 and a relay when allowed.
func (p *Proxy) serveConnect(c net.Conn, br *bufio.Reader, req *http.Request) {
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
	// waiting for the 200; they are in br already.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := u.Write(b); err != nil {
			return
		}
	}
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
