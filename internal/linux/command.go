package linux

import "github.com/openparallax/sandbox/internal/spec"

// Proxy is a running egress proxy as its caller sees it (the root's
// Egress wraps it): the address the program dials, the requests it
// refused, and Close.
type Proxy interface {
	Addr() string
	Denied() []spec.DeniedRequest
	Dropped() int
	Close() error
}
