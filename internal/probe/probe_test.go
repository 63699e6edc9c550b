package probe

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// TestOutcome: a probe is blocked only by an errno the caller names as the
// sandbox's denial, wrapped or not; success, a missing file or a refused
// connection fail it (they prove nothing about the sandbox).
func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, spec.ProbeFailed},
		{syscall.EACCES, spec.ProbeBlocked},
		{PathErr("open", "/x", syscall.EPERM), spec.ProbeBlocked},
		{ErrOp("connect", syscall.EACCES), spec.ProbeBlocked},
		{PathErr("open", "/x", syscall.ENOENT), spec.ProbeFailed},
		{ErrOp("connect", syscall.ECONNREFUSED), spec.ProbeFailed},
		{errors.New("no errno"), spec.ProbeFailed},
	} {
		r := Outcome("p", "t", tc.err, syscall.EACCES, syscall.EPERM)
		if r.Status != tc.want || r.Name != "p" || r.Target != "t" || r.Error == "" {
			t.Errorf("Outcome(%v) = %+v, want status %s with its error", tc.err, r, tc.want)
		}
	}
	if PathErr("open", "/x", nil) != nil || ErrOp("x", nil) != nil {
		t.Error("a nil error must stay nil")
	}
	var pe *os.PathError
	if !errors.As(PathErr("open", "/x", syscall.EPERM), &pe) || ErrnoOf(pe) != syscall.EPERM {
		t.Error("PathErr loses the errno")
	}
}

// TestPort: the network probe's port is one no entry grants; none where an
// entry grants every loopback port.
func TestPort(t *testing.T) {
	rc := &spec.Resolved{Connect: []spec.Endpoint{{Host: "*", Port: 1}, {Host: "example.com", Port: 9}}}
	if p := Port(rc); p != 7 {
		t.Errorf("Port = %d, want 7 (1 and 9 are granted)", p)
	}
	for _, ep := range []spec.Endpoint{{Host: "*", AnyPort: true}, {Host: "localhost", AnyPort: true}, {Host: "127.0.0.1", AnyPort: true}} {
		if p := Port(&spec.Resolved{Connect: []spec.Endpoint{ep}}); p != 0 {
			t.Errorf("Port with %v = %d, want 0 (every loopback port granted)", ep, p)
		}
	}
	if p := Port(&spec.Resolved{Connect: []spec.Endpoint{{Host: "example.com", AnyPort: true}}}); p != 1 {
		t.Errorf("Port with example.com:* = %d, want 1 (another host's ports are not loopback's)", p)
	}
}
