package sandbox

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// transparentControl is control_egress through the egress layer's
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
func transparentControl(rc *resolvedConfig, timeout time.Duration) ProbeResult {
	r := ProbeResult{Name: "control_egress"}
	var target string
	for _, ep := range rc.connect {
		if !ep.AnyPort && (ep.Host == "localhost" || net.ParseIP(ep.Host) != nil) {
			target = ep.String()
			break
		}
	}
	if target == "" {
		r.Status, r.Error = ProbeSkipped, "the proxy's port is closed to this process, and no entry is an IP literal or localhost (the direct path would need DNS)"
		return r
	}
	r.Target = target + " (direct, through the caller's relay)"
	c, err := net.DialTimeout("tcp", target, timeout)
	if err != nil {
		r.Status, r.Error = ProbeFailed, "must be allowed: "+err.Error()
		if !errors.Is(err, syscall.EACCES) {
			r.Status = ProbeSkipped
		}
		return r
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * timeout))
	_, err = c.Read(make([]byte, 1))
	switch {
	case err == nil || errors.Is(err, os.ErrDeadlineExceeded):
		r.Status = ProbeAllowed
	default:
		r.Status, r.Error = ProbeSkipped, "the caller ended the connection ("+err.Error()+"): it refused the host, or could not reach it"
	}
	return r
}
