package darwin

// How the macOS canary picks its targets: files and directories every Mac
// has, outside everything the profile grants, and the Config it resolves.
// Pure; canary_darwin.go probes.

import (
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/spec"
)

// privatePath maps a path under the macOS root symlinks /tmp, /var and
// /etc to its real place under /private. Inside a Seatbelt sandbox those
// symlinks usually cannot be read (they are not granted), so resolving such
// a path there fails; the mapping is the one every macOS installation has.
func privatePath(p string) string {
	for _, l := range []string{"/tmp", "/var", "/etc"} {
		if p == l || strings.HasPrefix(p, l+"/") {
			return "/private" + p
		}
	}
	return p
}

// isGranted reports whether path is inside anything the profile for rc
// grants read or write of: a Config path, a baseline path (one granted
// Exact, such as "/" whose names dyld reads, only as itself), or a path the
// TCP endpoints bring (/private/etc/hosts, /private/etc/ssl). macOS file
// systems are usually case-insensitive, so the comparison is too (when in
// doubt, granted: the probe then picks another target).
func isGranted(rc *spec.Resolved, path string) bool {
	lp := strings.ToLower(path)
	under := func(root string) bool { return spec.Under(lp, strings.ToLower(root)) }
	for _, list := range [][]spec.Path{rc.Read, rc.Write, rc.Exec} {
		for _, rp := range list {
			if under(rp.Resolved) {
				return true
			}
		}
	}
	for _, b := range baseline {
		if b.Exact && lp == strings.ToLower(b.Path) || !b.Exact && under(b.Path) {
			return true
		}
	}
	nt := connects(rc)
	return nt.hosts && under(hostsFile) || nt.remote && under(tlsDir)
}

// candidate is a canary target on macOS.
type candidate struct {
	path string
	// world: ordinary permissions let every user have the access wanted
	// (mode 0644 file, 1777 directory) on every macOS installation.
	world bool
}

// Canary targets: resolved paths (no /etc or /tmp symlink to read) of files
// and directories every macOS installation has. /private/etc/master.passwd
// (mode 0600) is a target only for root.
var (
	readTargets = []candidate{
		{"/private/etc/hosts", true}, {"/private/etc/passwd", true}, {"/private/etc/group", true},
		{"/private/etc/shells", true}, {"/private/etc/master.passwd", false},
	}
	writeTargets = []candidate{{"/private/tmp", true}, {"/private/var/tmp", true}}
)

// pickTarget returns the first candidate that rc does not grant and
// that ordinary permissions allow. access is access(2) with the effective
// IDs. Seatbelt mediates access(2) as well and refuses it with EPERM outside
// the granted paths; then ordinary permissions cannot be asked from inside
// the sandbox, and a candidate is used only if they allow everyone (world)
// or the caller is root. Either way the probe's own errno decides: EACCES
// (ordinary permissions) is never counted as blocked.
func pickTarget(rc *spec.Resolved, cands []candidate, access func(string) error, root bool) (string, bool) {
	for _, c := range cands {
		if isGranted(rc, c.path) {
			continue
		}
		err := access(c.path)
		if err == nil || probe.ErrnoOf(err) == syscall.EPERM && (c.world || root) {
			return c.path, true
		}
	}
	return "", false
}

// canaryConfig maps cfg's paths under /tmp, /var and /etc to /private:
// inside the sandbox those root symlinks cannot be read, so the Config could
// not be resolved as given; outside it the result is the same.
func canaryConfig(cfg spec.Config) spec.Config {
	m := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = privatePath(p)
		}
		return out
	}
	cfg.AllowedReadPaths = m(cfg.AllowedReadPaths)
	cfg.AllowedWritePaths = m(cfg.AllowedWritePaths)
	cfg.AllowedExecPaths = m(cfg.AllowedExecPaths)
	return cfg
}
