// Package probe holds what every platform's canary shares: building a
// probe's result from the exact error of an attempt, and the positive
// controls (what the sandbox must still allow). A probe is blocked only on
// an errno the caller names as the sandbox's own denial; anything else
// fails it, so a missing file or a closed port never reads as a denial.
package probe

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// Outcome builds a probe result from an attempt's error. A nil error means
// the operation went through: failed. An errno in blocked is blocked.
// Anything else is failed, with the error, since it proves nothing.
func Outcome(name, target string, err error, blocked ...syscall.Errno) spec.ProbeResult {
	r := spec.ProbeResult{Name: name, Target: target}
	if err == nil {
		r.Status, r.Error = spec.ProbeFailed, "not denied: the operation succeeded"
		return r
	}
	r.Error = err.Error()
	if slices.Contains(blocked, ErrnoOf(err)) {
		r.Status = spec.ProbeBlocked
	} else {
		r.Status = spec.ProbeFailed
	}
	return r
}

// Skipped is a probe that does not apply here, with why (never counted
// as blocked or failed).
func Skipped(name, why string) spec.ProbeResult {
	return spec.ProbeResult{Name: name, Status: spec.ProbeSkipped, Error: why}
}

// PathErr wraps err as an *os.PathError naming op and path; nil stays nil.
// The errno survives (errors.As), which is what a probe is judged by.
func PathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// ErrOp prefixes err with op, keeping it unwrappable; nil stays nil.
func ErrOp(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// PositiveControls check what the sandbox must still allow (the grants of
// rc and the system paths): a sandbox that
// also blocks those is broken, and a probe that cannot observe success
// proves nothing.
func PositiveControls(rc *spec.Resolved, timeout time.Duration) []spec.ProbeResult {
	var out []spec.ProbeResult
	control := func(name, target string, err error) {
		r := spec.ProbeResult{Name: name, Target: target, Status: spec.ProbeAllowed}
		if err != nil {
			r.Status, r.Error = spec.ProbeFailed, "must be allowed: "+err.Error()
		}
		out = append(out, r)
	}
	buf := make([]byte, 16)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		_, err = f.Read(buf)
		f.Close()
	}
	control("control_system", "/dev/urandom", err)
	if len(rc.Read) > 0 {
		rp := rc.Read[0]
		if rp.IsDir {
			_, err = os.ReadDir(rp.Resolved)
		} else {
			var f *os.File
			if f, err = os.Open(rp.Resolved); err == nil {
				if _, err = f.Read(buf[:1]); errors.Is(err, io.EOF) {
					err = nil // an empty file was read
				}
				f.Close()
			}
		}
		control("control_read", rp.Resolved, err)
	}
	for _, rp := range rc.Write {
		if !rp.IsDir {
			continue
		}
		path := FileName(rp.Resolved)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.Write([]byte("canary"))
			f.Close()
			if rmErr := os.Remove(path); err == nil {
				err = rmErr
			}
		}
		control("control_write", rp.Resolved, err)
		break
	}
	if proxy, ok := EgressProxyHere(rc); ok {
		// Under WrapCommand and Run with host names: every entry,
		// localhost's too, is reached through the caller's proxy; a raw
		// connect reaches only the proxy's port.
		out = append(out, EgressControl(rc, proxy, timeout))
		return out
	}
	for _, ep := range rc.Connect {
		if !ep.AnyHost() && !ep.Loopback() || ep.AnyPort {
			continue // an any-port entry names no port to try
		}
		addr := "127.0.0.1:" + strconv.Itoa(int(ep.Port))
		c, err := net.DialTimeout("tcp", addr, timeout)
		if c != nil {
			c.Close()
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			out = append(out, spec.ProbeResult{Name: "control_connect", Target: addr, Status: spec.ProbeSkipped, Error: "nothing listening on the granted port"})
			continue
		}
		control("control_connect", addr, err)
		break
	}
	return out
}

// Port is a loopback port for the network probe that no endpoint of rc
// grants (whatever its host: a port rule matches 127.0.0.1 too), or 0. None
// of the candidates normally has a listener, so a connect that is let
// through is refused by the kernel (ECONNREFUSED), never mistaken for a
// denial. An any-port entry for any host or for loopback ("*:*",
// "localhost:*", "127.0.0.1:*") grants every loopback port: 0. (One for
// another host grants none of them: where the sandbox lets the probe
// through anyway, as ApplySelf's Landlock must, the probe fails, and
// PlanFor reports tcp_connect not enforced.)
func Port(rc *spec.Resolved) int {
	if slices.ContainsFunc(rc.Connect, grantsLoopbackAnyPort) {
		return 0
	}
	for _, p := range []int{1, 9, 7, 13, 19, 37} {
		if !slices.ContainsFunc(rc.Connect, func(e spec.Endpoint) bool { return int(e.Port) == p }) {
			return p
		}
	}
	return 0
}

// grantsLoopbackAnyPort reports whether e grants every port of the
// loopback address the probe dials: an any-port entry for any host, for
// loopback, or for a range that holds 127.0.0.1.
func grantsLoopbackAnyPort(e spec.Endpoint) bool {
	if !e.AnyPort {
		return false
	}
	if r, ok := e.Range(); ok {
		return r.Contains(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	}
	return e.AnyHost() || e.Loopback()
}

// FileName is a name in dir no other run uses: the file probes and
// controls create it with O_EXCL and remove it.
func FileName(dir string) string {
	return filepath.Join(dir, fmt.Sprintf(".sandbox-canary-%d-%d", os.Getpid(), time.Now().UnixNano()))
}

// ErrnoOf is the errno inside err, or 0.
func ErrnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// EgressProxyHere reports whether this process runs behind the egress
// proxy of WrapCommand and Run (Linux, a Config naming only hosts): its
// network namespace has no interface but lo, and HTTP_PROXY names a
// loopback address, which it returns. The environment alone proves
// nothing (anyone may set it): the control below only ever counts as a
// positive control, never as a probe.
func EgressProxyHere(rc *spec.Resolved) (string, bool) {
	if runtime.GOOS != "linux" || len(rc.Connect) == 0 || slices.ContainsFunc(rc.Connect, spec.Endpoint.AnyHost) {
		return "", false
	}
	proxy, ok := strings.CutPrefix(os.Getenv("HTTP_PROXY"), "http://127.0.0.1:")
	if !ok {
		return "", false
	}
	dev, err := os.ReadFile("/proc/self/net/dev")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(dev), "\n")[2:] {
		if name, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) != "lo" {
			return "", false
		}
	}
	return "127.0.0.1:" + proxy, true
}

// EgressControl asks the proxy for a tunnel to the first host entry of rc
// that names one host on one port (not "host:*", not an address range,
// which names no one address to ask for) (HTTP CONNECT): 200 means the proxy, outside the sandbox, let an allowed
// host through, as it must. A refusal (403) fails the control; a
// destination the caller cannot reach (502, a timeout) skips it.
func EgressControl(rc *spec.Resolved, proxy string, timeout time.Duration) spec.ProbeResult {
	i := slices.IndexFunc(rc.Connect, func(e spec.Endpoint) bool { _, isRange := e.Range(); return !e.AnyPort && !isRange })
	if i < 0 {
		return spec.ProbeResult{Name: "control_egress", Status: spec.ProbeSkipped, Target: "via " + proxy,
			Error: "every entry allows any port (\"host:*\") or is an address range: no one host and port to ask the proxy for"}
	}
	ep := rc.Connect[i]
	r := spec.ProbeResult{Name: "control_egress", Target: ep.String() + " via " + proxy}
	c, err := net.DialTimeout("tcp", proxy, timeout)
	if errors.Is(err, syscall.EACCES) {
		// The program's own Landlock domain (ApplySelf inside
		// WrapCommand, as the seeds' Agent does) may leave the proxy's
		// port out: the transparent path is the one in force then.
		return TransparentControl(rc, timeout)
	}
	if err != nil {
		r.Status, r.Error = spec.ProbeFailed, "must be allowed: connect to the proxy: "+err.Error()
		return r
	}
	defer c.Close()
	// Five times the probe timeout: the proxy resolves and connects in the
	// caller's network.
	c.SetDeadline(time.Now().Add(5 * timeout))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", ep.String(), ep.String())
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(c, buf, 12)
	status := string(buf[:n])
	switch {
	case err != nil && n < 12:
		r.Status, r.Error = spec.ProbeSkipped, "no answer from the proxy in time (the destination may be unreachable from the caller): "+err.Error()
	case strings.HasPrefix(status, "HTTP/1.1 200"):
		r.Status = spec.ProbeAllowed
	case strings.HasPrefix(status, "HTTP/1.1 403"):
		r.Status, r.Error = spec.ProbeFailed, "must be allowed: the proxy refused an allowed host"
	default:
		first, _, _ := strings.Cut(status, "\r")
		r.Status, r.Error = spec.ProbeSkipped, "the destination is not reachable from the caller: "+first
	}
	return r
}

// TransparentControl is control_egress through the egress layer's
// transparent path (Linux, WrapCommand and Run), used when the proxy's
// port is closed to this process by its own rules: it connects, as any
// client would, to the first entry of rc that needs no DNS (an IP literal
// or localhost), and waits 5 × timeout for the caller's answer. The
// caller's listener takes every connection at once and resets one it
// refuses, or one whose destination it cannot reach: a reset is therefore
// ambiguous and skips the control (as the proxy's 502 does); data or
// silence until the deadline means the caller relayed it (allowed). A
// refused connect (EACCES: Landlock) fails it: an allowed port must be
// open.
func TransparentControl(rc *spec.Resolved, timeout time.Duration) spec.ProbeResult {
	r := spec.ProbeResult{Name: "control_egress"}
	var target string
	for _, ep := range rc.Connect {
		if !ep.AnyPort && (ep.Host == "localhost" || net.ParseIP(ep.Host) != nil) {
			target = ep.String()
			break
		}
	}
	if target == "" {
		r.Status, r.Error = spec.ProbeSkipped, "the proxy's port is closed to this process, and no entry is an IP literal or localhost (the direct path would need DNS)"
		return r
	}
	r.Target = target + " (direct, through the caller's relay)"
	c, err := net.DialTimeout("tcp", target, timeout)
	if err != nil {
		r.Status, r.Error = spec.ProbeFailed, "must be allowed: "+err.Error()
		if !errors.Is(err, syscall.EACCES) {
			r.Status = spec.ProbeSkipped
		}
		return r
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * timeout))
	_, err = c.Read(make([]byte, 1))
	switch {
	case err == nil || errors.Is(err, os.ErrDeadlineExceeded):
		r.Status = spec.ProbeAllowed
	default:
		r.Status, r.Error = spec.ProbeSkipped, "the caller ended the connection ("+err.Error()+"): it refused the host, or could not reach it"
	}
	return r
}
