package egress

import (
	"sync"
	"time"
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
)

// DeniedHeader is the response header that carries the reason of an HTTP
// 403 (or 400) from the proxy, so that a program (or its log) can tell a
// sandbox refusal from a refusal by the destination.
const DeniedHeader = "X-Sandbox-Denied"

// Denial is one refused request.
type Denial struct {
	Time     time.Time `json:"time"`
	Protocol string    `json:"protocol"` // "http" (absolute URI), "connect" (HTTP CONNECT), "socks5", or "" when unreadable
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
