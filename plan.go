package sandbox

import (
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// Feature names used in [Plan.Features].
const (
	FeatureFilesystem   = spec.FeatureFilesystem   // read/write confined to granted paths
	FeatureTruncate     = spec.FeatureTruncate     // truncate(2) confined to write paths
	FeatureIoctlDev     = spec.FeatureIoctlDev     // ioctl on device files confined
	FeatureExec         = spec.FeatureExec         // execution confined to the exec allowlist
	FeatureExecLoader   = spec.FeatureExecLoader   // the dynamic loader cannot run files off the allowlist
	FeatureTCPConnect   = spec.FeatureTCPConnect   // outgoing TCP confined to granted ports
	FeatureTCPHost      = spec.FeatureTCPHost      // the host part of granted endpoints
	FeatureTCPBind      = spec.FeatureTCPBind      // listening confined to granted ports
	FeatureUDP          = spec.FeatureUDP          // UDP sockets
	FeatureUnixSockets  = spec.FeatureUnixSockets  // AF_UNIX sockets
	FeatureScopeUnix    = spec.FeatureScopeUnix    // connect to abstract unix sockets outside the sandbox
	FeatureScopeSignal  = spec.FeatureScopeSignal  // signals to processes outside the sandbox
	FeatureSpawn        = spec.FeatureSpawn        // creating processes
	FeatureMetadata     = spec.FeatureMetadata     // mode, owner, times, xattrs of files outside the grants
	FeatureSysVIPC      = spec.FeatureSysVIPC      // System V shared memory, queues, semaphores
	FeatureSyscalls     = spec.FeatureSyscalls     // dangerous syscalls, foreign architectures
	FeatureDenyWrite    = spec.FeatureDenyWrite    // read-only paths inside write grants
	FeatureDenyRead     = spec.FeatureDenyRead     // hidden paths inside grants
	FeatureMounts       = spec.FeatureMounts       // host paths shown at other paths
	FeatureCamera       = spec.FeatureCamera       // the camera device (macOS)
	FeatureMicrophone   = spec.FeatureMicrophone   // the microphone device (macOS)
	FeatureExecWrites   = spec.FeatureExecWrites   // programs in the write paths may run
	FeatureSharedMem    = spec.FeatureSharedMem    // /dev/shm, private to the sandbox or not
	FeatureGitProtect   = spec.FeatureGitProtect   // a repository's hooks and config read-only (Linux mount layer)
	FeatureGitCommonDir = spec.FeatureGitCommonDir // a .git/commondir the program creates (redirects hooks and config)
	FeaturePrivateTmp   = spec.FeaturePrivateTmp   // a private /tmp and /dev/shm (Linux mount layer)
	FeatureWriteNoexec  = spec.FeatureWriteNoexec  // nothing written in the write paths can be executed
	FeaturePrivateRoot  = spec.FeaturePrivateRoot  // the program's own root: only the grants are there (Linux mount layer)
)

// FeatureTCPAnyPort reports the any-port entries of AllowedTCPConnect
// ("host:*") where they cannot be served to every client: under
// WrapCommand and Run with the Linux egress namespace, only the proxy
// serves them on any port (see [ParseEndpoint]).
const FeatureTCPAnyPort = spec.FeatureTCPAnyPort

// Enforcement says whether one feature of a Config is enforced here:
// Feature (a Feature* name), Enforced, Detail (how it is enforced, or
// why it is not), Hint (a remedy for an unenforced feature), Scope (the
// entry point it is about, ScopeApplySelf or ScopeCommand, when it differs
// between them; Strict considers only the entries of the entry point
// called).
type Enforcement = spec.Enforcement

// PathRule is one filesystem rule the sandbox will make: Path, Access (the
// platform's own names, e.g. Landlock rights) and Source (which Config
// field or default it comes from).
type PathRule = spec.PathRule

// Plan is what applying a Config would do on this system, computed without
// applying anything: the effective endowments.
type Plan struct {
	Platform  string `json:"platform"`
	Mechanism string `json:"mechanism"`
	Version   int    `json:"version,omitempty"`
	// Available is false when the mechanism is missing: ApplySelf and
	// WrapCommand would return ErrUnavailable.
	Available bool          `json:"available"`
	Reason    string        `json:"reason,omitempty"`
	Features  []Enforcement `json:"features"`
	Paths     []PathRule    `json:"paths,omitempty"`
	// Network lists the network rules, one line each.
	Network []string `json:"network,omitempty"`
	// Syscalls summarises the syscall filter, one line each.
	Syscalls []string `json:"syscalls,omitempty"`
	// Skipped lists default system paths absent on this machine.
	Skipped []string `json:"skipped,omitempty"`
	// Grants is the Config as resolved here, in terms every platform
	// shares (see [Plan.Describe]).
	Grants Grants `json:"grants"`
	// TimeLimit is not set by PlanFor: a host that runs the program with a
	// timeout (RunOptions.Timeout) sets it so that Describe mentions it.
	TimeLimit time.Duration `json:"-"`
	// MountLayer lists, on Linux, the steps of the mount-namespace layer
	// WrapCommand and Run would perform for this Config (from the
	// caller's working directory), one per line; empty when the layer is
	// not used (see the features' details for why).
	MountLayer []string `json:"mount_layer,omitempty"`
	// ChildHalf says, on Linux, what runs in WrapCommand's and Run's child
	// between fork and the target (the static helper or the Go
	// trampoline), and why.
	ChildHalf string `json:"child_half,omitempty"`
	// Egress says, when Config.AllowedTCPConnect names hosts, how
	// WrapCommand and Run enforce them here (nil when it names none, and
	// on platforms without the egress layer).
	Egress *EgressPlan `json:"egress,omitempty"`
}

// EgressPlan is how the host names of Config.AllowedTCPConnect are
// enforced under WrapCommand and Run (see [Egress]): Mode (EgressTransparent,
// EgressProxy or EgressPortOnly), Proxy, Hosts, AnyPort, Reason, Clients
// (documented on internal/spec's EgressPlan).
type EgressPlan = spec.EgressPlan

// EgressPlan.Mode values.
const (
	// EgressProxy: a network namespace with only loopback, and a proxy
	// the caller serves that allows only the listed hosts.
	EgressProxy = spec.EgressProxy
	// EgressTransparent: a network namespace with only loopback in which
	// every address is local; the caller relays each direct TCP connection
	// to an allowed host and port (any client, as it dials), answers DNS
	// for the allowed names, and serves the proxy too (Proxy is its
	// address) for clients that use it.
	EgressTransparent = spec.EgressTransparent
	// EgressPortOnly: Landlock's port rules; any host on those ports.
	EgressPortOnly = spec.EgressPortOnly
)

// NotEnforced returns the features that are asked for but not enforced.
func (p Plan) NotEnforced() []Enforcement {
	var out []Enforcement
	for _, f := range p.Features {
		if !f.Enforced {
			out = append(out, f)
		}
	}
	return out
}

// PlanFor validates cfg and reports, without applying anything, what the
// sandbox on this system would enforce of it and what it would not, with the
// rules it would make. The error is a *ConfigError for a refused Config.
//
// On Linux the plan is ApplySelf's, with entries scoped to ScopeCommand for
// what WrapCommand and Run do differently: the mount-namespace layer's
// features (deny paths, mounts, git protection, private /tmp, noexec write
// paths), evaluated from the caller's working directory, and enforced
// there only where the layer is used; and file_metadata, whose
// WrapCommand/Run entry (before ApplySelf's) is enforced by the layer's
// read-only mounts when the layer is used, and not otherwise (chmod and
// utimes by path of the user's own files outside the grants stay
// possible; see the entry's detail), while ApplySelf's seccomp refuses
// them by path. Strict makes WrapCommand and Run use the layer, and
// refuses where it is unavailable.
func PlanFor(cfg Config) (Plan, error) {
	rc, err := resolve(cfg)
	if err != nil {
		return Plan{}, err
	}
	p := planPlatform(rc)
	p.Grants = grantsOf(rc)
	return p, nil
}

// checkApplicable is the gate of Windows' ApplySelf and WrapCommand (the
// other platforms' engines call spec.CheckApplicable themselves): the
// mechanism must be there, and under Strict nothing of the entries without
// a Scope or with ScopeCommand may be left unenforced.
func checkApplicable(p Plan, cfg Config) error {
	return spec.CheckApplicable(spec.Plan(p), cfg.Strict, ScopeCommand, cfg.spec().StrictAccepts()...)
}
