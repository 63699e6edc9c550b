package egress

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Reasons a request is refused; the value of [DeniedHeader] and of
// Denial.Reason.
const (
	// ReasonNotAllowed: the host and port are not on the allowlist.
	ReasonNotAllowed = "not-allowed"
	// ReasonNonPublic: an allowed name resolved only to addresses that
	// reach the caller's own or internal networks (DNS rebinding), and no
	// rule names them.
	ReasonNonPublic = "non-public-address"
	// ReasonMalformed: the request could not be read as a proxy request
	// (not HTTP or SOCKS5, a relative URI, a bad host name).
	ReasonMalformed = "malformed-request"
	// ReasonUnsupported: a well-formed request the proxy does not serve
	// (https:// absolute URIs, SOCKS BIND or UDP ASSOCIATE, SOCKS
	// authentication methods, SOCKS4).
	ReasonUnsupported = "unsupported"
	// ReasonTooLarge: a request head longer than Options.MaxHeaderBytes,
	// or with more than Options.MaxHeaderFields header lines (HTTP 431).
	ReasonTooLarge = "request-too-large"
	// ReasonTimeout: a request head begun and not ended within
	// Options.HandshakeTimeout (HTTP 408).
	ReasonTimeout = "request-timeout"
	// ReasonBusy: the sandbox is at one of the proxy's shared bounds:
	// Options.MaxConns connections open, or Options.MaxBufferedBytes of
	// request heads held (HTTP 503, SOCKS5 general failure). The request
	// may succeed later.
	ReasonBusy = "proxy-busy"
	// ReasonInboundPool: a connection from the caller's loopback to a
	// port the program listens on found the inbound pool of that port
	// used up (see [Proxy.ServeInboundPool]); the connection was reset.
	ReasonInboundPool = "inbound-pool-exhausted"
)

// DeniedHeader is the response header that carries the reason of an HTTP
// 403 (or 400, 408, 431, 503) from the proxy, so that a program (or its log) can tell a
// sandbox refusal from a refusal by the destination.
const DeniedHeader = "X-Sandbox-Denied"

// Denial is one refused request.
type Denial struct {
	Time     time.Time `json:"time"`
	Protocol string    `json:"protocol"` // "http" (absolute URI), "connect" (HTTP CONNECT), "socks5" or "socks4", "tcp" (transparent), "dns", "inbound" (ReasonInboundPool), or "" when unreadable
	Host     string    `json:"host"`     // as requested (canonical when it parsed), "" when unreadable
	Port     uint16    `json:"port"`
	Reason   string    `json:"reason"` // one of the Reason constants
	Detail   string    `json:"detail"` // for a person
}

// denials records refusals, keeping the first max of them and counting
// the rest: a confined program cannot make its caller's memory grow without
// bound by asking for forbidden hosts.
type denials struct {
	mu      sync.Mutex
	list    []Denial
	dropped int
	max     int
	notify  func(Denial)
}

func (d *denials) add(x Denial) {
	d.mu.Lock()
	if len(d.list) < d.max {
		d.list = append(d.list, x)
	} else {
		d.dropped++
	}
	notify := d.notify
	d.mu.Unlock()
	if notify != nil {
		notify(x)
	}
}

// Denied returns the refusals recorded so far, oldest first.
func (p *Proxy) Denied() []Denial {
	p.denials.mu.Lock()
	defer p.denials.mu.Unlock()
	return append([]Denial(nil), p.denials.list...)
}

// Dropped returns how many refusals were not kept by Denied because
// MaxDenials was reached.
func (p *Proxy) Dropped() int {
	p.denials.mu.Lock()
	defer p.denials.mu.Unlock()
	return p.denials.dropped
}

func (p *Proxy) deny(d Denial) {
	d.Time = time.Now()
	d.Host, d.Detail = printable(d.Host, 255), printable(d.Detail, 1024)
	p.denials.add(d)
}

// printable makes text from a confined program safe to log or print on a
// terminal (sandbox run --explain): control characters and invalid UTF-8
// become '?', and the text is cut at max bytes.
func printable(s string, max int) string {
	if len(s) > max {
		s = s[:max]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}
