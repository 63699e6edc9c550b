package sandbox

// The macOS engine's public face, on every OS: the channel features its
// Plan reports and the profile a Config becomes (internal/darwin).

import (
	"github.com/openparallax/sandbox/internal/darwin"
	"github.com/openparallax/sandbox/internal/spec"
)

// Feature names of the channels a macOS profile leaves open when it grants
// them: services outside the sandbox that act for the process. Each is
// reported as not enforced whenever it is granted, so Strict refuses it.
const (
	// FeatureResolver: mDNSResponder, granted when a TCP endpoint's host is
	// a DNS name or "*".
	FeatureResolver = spec.FeatureResolver
	// FeatureTLSTrust: com.apple.trustd.agent, granted with a non-loopback
	// TCP endpoint unless Config.NoTLSTrustService.
	FeatureTLSTrust = spec.FeatureTLSTrust
	// FeatureUserLookup: com.apple.system.opendirectoryd.libinfo, granted
	// to every profile for user and group lookups (getpwuid, getgrgid).
	// It is listed as a channel but reported enforced, so that Strict
	// does not refuse every Config on macOS: it discloses the names of the
	// Mac's users and groups, and on a Mac bound to a directory server a
	// lookup reaches that server.
	FeatureUserLookup = spec.FeatureUserLookup
)

// SeatbeltProfile returns the macOS Seatbelt profile that cfg becomes, as
// WrapCommand passes it to /usr/bin/sandbox-exec: the SBPL text, which starts
// "(version 1)\n(deny default)" and holds no path from cfg, and the
// parameters the text refers to as (param "NAME"), each as "NAME=VALUE" with
// a path as VALUE (sandbox-exec's -D arguments).
//
// It is pure apart from resolving cfg's paths, and works on every OS, so a
// tool can show the macOS profile anywhere. The paths are resolved on this
// machine: on macOS /tmp/x becomes /private/tmp/x, as Seatbelt needs; on
// another OS a path under /tmp, /var or /etc (symlinks on macOS, where a rule
// for them would never match) is refused with an error saying so.
//
// The exec allowlist is cfg's alone: WrapCommand also adds the program it
// starts (and that program's "#!" interpreter) as further exec paths. A
// refused Config is a *ConfigError (errors.Is(err, ErrInvalidConfig)).
// cfg.Strict is not considered: what is not enforced is reported by
// [PlanFor] on macOS.
func SeatbeltProfile(cfg Config) (text string, params []string, err error) {
	return darwin.SeatbeltProfile(cfg.spec())
}
