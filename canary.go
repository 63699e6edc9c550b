package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Canary statuses (CanaryResult.Status).
const (
	CanarySandboxed   = "sandboxed"   // every applicable probe blocked: the only verified status
	CanaryPartial     = "partial"     // some blocked, some not
	CanaryUnsandboxed = "unsandboxed" // nothing blocked
	CanaryUnavailable = "unavailable" // no probe was applicable
	CanaryUnknown     = "unknown"     // no readable result (ReadCanaryResult)
)

// Probe outcomes (ProbeResult.Status).
const (
	ProbeBlocked = "blocked" // the sandbox denied it, by the exact error that proves so
	ProbeFailed  = "failed"  // it was not denied (or a positive control did not work)
	ProbeSkipped = "skipped" // not applicable here; Error says why
	ProbeAllowed = "allowed" // a positive control worked, as it must
)

// CanaryResult is the outcome of one canary run.
type CanaryResult struct {
	Verified  bool          `json:"verified"`
	Status    string        `json:"status"`
	Platform  string        `json:"platform"`
	Mechanism string        `json:"mechanism"`
	Probes    []ProbeResult `json:"probes"`
	Summary   string        `json:"summary"`
	Timestamp time.Time     `json:"timestamp"`
	// Nonce is the value the Engine handed the Agent for this run (see
	// [NewCanaryNonce]); the Agent copies it here before writing the
	// result, and [ReadFreshCanaryResult] refuses a result without it.
	Nonce string `json:"nonce,omitempty"`
}

// ProbeResult is one attempted operation. A positive control (something the
// sandbox must still allow) has Status "allowed" when it worked and "failed"
// when it did not.
type ProbeResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Target string `json:"target,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (r CanaryResult) count(status string) int {
	n := 0
	for _, p := range r.Probes {
		if p.Status == status {
			n++
		}
	}
	return n
}

// Blocked counts the probes the sandbox denied.
func (r CanaryResult) Blocked() int { return r.count(ProbeBlocked) }

// Failed counts the probes that were not denied and the positive controls
// that did not work.
func (r CanaryResult) Failed() int { return r.count(ProbeFailed) }

// Skipped counts the probes that did not apply here.
func (r CanaryResult) Skipped() int { return r.count(ProbeSkipped) }

// rollup is the status of a set of probes: applicable = blocked + failed;
// none applicable → unavailable; none failed → sandboxed; some blocked →
// partial; else unsandboxed.
func rollup(probes []ProbeResult) string {
	r := CanaryResult{Probes: probes}
	switch b, f := r.Blocked(), r.Failed(); {
	case b+f == 0:
		return CanaryUnavailable
	case f == 0:
		return CanarySandboxed
	case b > 0:
		return CanaryPartial
	default:
		return CanaryUnsandboxed
	}
}

// summarize is the one-line summary, e.g.
// "Sandbox verified: 2/2 probes blocked (file_read, file_write). Skipped: network."
// Only a result whose status is sandboxed begins "Sandbox verified"; every
// other begins "Sandbox not verified", so that no log line of a failed or
// partial run can be read as a success.
func summarize(probes []ProbeResult) string {
	var blocked, failed, skipped []string
	for _, p := range probes {
		switch p.Status {
		case ProbeBlocked:
			blocked = append(blocked, p.Name)
		case ProbeFailed:
			failed = append(failed, p.Name)
		case ProbeSkipped:
			skipped = append(skipped, p.Name)
		}
	}
	var b strings.Builder
	verdict := "Sandbox not verified"
	if rollup(probes) == CanarySandboxed {
		verdict = "Sandbox verified"
	}
	fmt.Fprintf(&b, "%s: %d/%d probes blocked", verdict, len(blocked), len(blocked)+len(failed))
	if len(blocked) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(blocked, ", "))
	}
	b.WriteString(".")
	if len(failed) > 0 {
		fmt.Fprintf(&b, " Failed: %s.", strings.Join(failed, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " Skipped: %s.", strings.Join(skipped, ", "))
	}
	return b.String()
}

// NewCanaryResult rolls probes up into a result: status, verified flag and
// summary are derived, never set by hand.
func NewCanaryResult(mechanism string, probes []ProbeResult) CanaryResult {
	status := rollup(probes)
	return CanaryResult{
		Verified:  status == CanarySandboxed,
		Status:    status,
		Platform:  runtime.GOOS,
		Mechanism: mechanism,
		Probes:    probes,
		Summary:   summarize(probes),
		Timestamp: time.Now().UTC(),
	}
}

// outcome builds a probe result from an attempt's error. A nil error means
// the operation went through: failed. An errno in blocked is blocked.
// Anything else is failed, with the error, since it proves nothing.
func outcome(name, target string, err error, blocked ...syscall.Errno) ProbeResult {
	r := ProbeResult{Name: name, Target: target}
	if err == nil {
		r.Status, r.Error = ProbeFailed, "not denied: the operation succeeded"
		return r
	}
	r.Error = err.Error()
	if slices.Contains(blocked, errnoOf(err)) {
		r.Status = ProbeBlocked
	} else {
		r.Status = ProbeFailed
	}
	return r
}

func skipped(name, why string) ProbeResult {
	return ProbeResult{Name: name, Status: ProbeSkipped, Error: why}
}

func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

func errOp(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// positiveControls check what the sandbox must still allow (the grants of
// rc and the system paths): a sandbox that
// also blocks those is broken, and a probe that cannot observe success
// proves nothing.
func positiveControls(rc *resolvedConfig, timeout time.Duration) []ProbeResult {
	var out []ProbeResult
	control := func(name, target string, err error) {
		r := ProbeResult{Name: name, Target: target, Status: ProbeAllowed}
		if err != nil {
			r.Status, r.Error = ProbeFailed, "must be allowed: "+err.Error()
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
	if len(rc.read) > 0 {
		rp := rc.read[0]
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
	for _, rp := range rc.write {
		if !rp.IsDir {
			continue
		}
		path := canaryFileName(rp.Resolved)
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
	if proxy, ok := egressProxyHere(rc); ok {
		// Under WrapCommand and Run with host names: every entry,
		// localhost's too, is reached through the caller's proxy; a raw
		// connect reaches only the proxy's port.
		out = append(out, egressControl(rc, proxy, timeout))
		return out
	}
	for _, ep := range rc.connect {
		if !ep.AnyHost() && !ep.Loopback() || ep.AnyPort {
			continue // an any-port entry names no port to try
		}
		addr := "127.0.0.1:" + strconv.Itoa(int(ep.Port))
		c, err := net.DialTimeout("tcp", addr, timeout)
		if c != nil {
			c.Close()
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			out = append(out, ProbeResult{Name: "control_connect", Target: addr, Status: ProbeSkipped, Error: "nothing listening on the granted port"})
			continue
		}
		control("control_connect", addr, err)
		break
	}
	return out
}

// probePort is a loopback port for the network probe that no endpoint of rc
// grants (whatever its host: a port rule matches 127.0.0.1 too), or 0. None
// of the candidates normally has a listener, so a connect that is let
// through is refused by the kernel (ECONNREFUSED), never mistaken for a
// denial. An any-port entry for any host or for loopback ("*:*",
// "localhost:*", "127.0.0.1:*") grants every loopback port: 0. (One for
// another host grants none of them: where the sandbox lets the probe
// through anyway, as ApplySelf's Landlock must, the probe fails, and
// PlanFor reports tcp_connect not enforced.)
func probePort(rc *resolvedConfig) int {
	if slices.ContainsFunc(rc.connect, func(e Endpoint) bool { return e.AnyPort && (e.AnyHost() || e.Loopback()) }) {
		return 0
	}
	for _, p := range []int{1, 9, 7, 13, 19, 37} {
		if !slices.ContainsFunc(rc.connect, func(e Endpoint) bool { return int(e.Port) == p }) {
			return p
		}
	}
	return 0
}

// canaryFileName is a name in dir no other run uses: the file probes and
// controls create it with O_EXCL and remove it.
func canaryFileName(dir string) string {
	return filepath.Join(dir, fmt.Sprintf(".sandbox-canary-%d-%d", os.Getpid(), time.Now().UnixNano()))
}

// errnoOf is the errno inside err, or 0.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// VerifyCanary runs the canary probes in the calling process, which should
// already be sandboxed. In a process that confined itself with ApplySelf
// (of a Sandbox from [New]) it verifies against the Config that was
// applied, the last one if ApplySelf was called more than once: the same
// as VerifyCanaryFor(cfg). Otherwise it chooses targets as for an empty
// Config, nothing granted beyond the system paths, and a probe may then hit
// something the sandbox grants (a granted port, say) and fail.
//
// A program started with WrapCommand has not called ApplySelf and does not
// know its Config: the Engine should hand it over, for example as JSON in
// an environment variable or a file the program reads, and the program
// then calls VerifyCanaryFor with it (examples/engine and examples/agent
// do this with SANDBOX_CONFIG). A Config so received only picks the
// probes' targets; a wrong one can make probes skip or controls fail, never
// turn a denial the sandbox did not make into "blocked".
func VerifyCanary() CanaryResult {
	if c := appliedConfig.Load(); c != nil {
		return VerifyCanaryFor(*c)
	}
	return VerifyCanaryFor(Config{})
}

// VerifyCanaryFor runs the canary probes for a process sandboxed with cfg:
// each probe attempts something cfg does not grant and counts as blocked only
// on the exact error that proves the sandbox denied it; positive controls
// check that what cfg grants still works (a failed control fails the
// result). A run takes milliseconds and leaves nothing behind.
//
// cfg's paths are resolved again inside the sandbox: on macOS, where a
// sandboxed process may not be able to read the symlinks above a path, pass
// paths already resolved (/private/tmp, not /tmp).
func VerifyCanaryFor(cfg Config) CanaryResult { return verifyPlatform(cfg) }

// egressProxyHere reports whether this process runs behind the egress
// proxy of WrapCommand and Run (Linux, a Config naming only hosts): its
// network namespace has no interface but lo, and HTTP_PROXY names a
// loopback address, which it returns. The environment alone proves
// nothing (anyone may set it): the control below only ever counts as a
// positive control, never as a probe.
func egressProxyHere(rc *resolvedConfig) (string, bool) {
	if runtime.GOOS != "linux" || len(rc.connect) == 0 || slices.ContainsFunc(rc.connect, Endpoint.AnyHost) {
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

// egressControl asks the proxy for a tunnel to the first host entry of rc
// (HTTP CONNECT): 200 means the proxy, outside the sandbox, let an allowed
// host through, as it must. A refusal (403) fails the control; a
// destination the caller cannot reach (502, a timeout) skips it.
func egressControl(rc *resolvedConfig, proxy string, timeout time.Duration) ProbeResult {
	i := slices.IndexFunc(rc.connect, func(e Endpoint) bool { return !e.AnyPort })
	if i < 0 {
		return ProbeResult{Name: "control_egress", Status: ProbeSkipped, Target: "via " + proxy,
			Error: "every entry allows any port (\"host:*\"): no port to ask the proxy for"}
	}
	ep := rc.connect[i]
	r := ProbeResult{Name: "control_egress", Target: ep.String() + " via " + proxy}
	c, err := net.DialTimeout("tcp", proxy, timeout)
	if errors.Is(err, syscall.EACCES) {
		// The program's own Landlock domain (ApplySelf inside
		// WrapCommand, as the seeds' Agent does) may leave the proxy's
		// port out: the transparent path is the one in force then.
		return transparentControl(rc, timeout)
	}
	if err != nil {
		r.Status, r.Error = ProbeFailed, "must be allowed: connect to the proxy: "+err.Error()
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
		r.Status, r.Error = ProbeSkipped, "no answer from the proxy in time (the destination may be unreachable from the caller): "+err.Error()
	case strings.HasPrefix(status, "HTTP/1.1 200"):
		r.Status = ProbeAllowed
	case strings.HasPrefix(status, "HTTP/1.1 403"):
		r.Status, r.Error = ProbeFailed, "must be allowed: the proxy refused an allowed host"
	default:
		first, _, _ := strings.Cut(status, "\r")
		r.Status, r.Error = ProbeSkipped, "the destination is not reachable from the caller: "+first
	}
	return r
}
