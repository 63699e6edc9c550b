package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Feature names used in [Plan.Features].
const (
	FeatureFilesystem   = "filesystem"          // read/write confined to granted paths
	FeatureTruncate     = "fs_truncate"         // truncate(2) confined to write paths
	FeatureIoctlDev     = "fs_ioctl_dev"        // ioctl on device files confined
	FeatureExec         = "exec"                // execution confined to the exec allowlist
	FeatureExecLoader   = "exec_loader"         // the dynamic loader cannot run files off the allowlist
	FeatureTCPConnect   = "tcp_connect"         // outgoing TCP confined to granted ports
	FeatureTCPHost      = "tcp_connect_host"    // the host part of granted endpoints
	FeatureTCPBind      = "tcp_bind"            // listening confined to granted ports
	FeatureUDP          = "udp"                 // UDP sockets
	FeatureUnixSockets  = "unix_sockets"        // AF_UNIX sockets
	FeatureScopeUnix    = "scope_abstract_unix" // connect to abstract unix sockets outside the sandbox
	FeatureScopeSignal  = "scope_signal"        // signals to processes outside the sandbox
	FeatureSpawn        = "process_spawn"       // creating processes
	FeatureMetadata     = "file_metadata"       // mode, owner, times, xattrs of files outside the grants
	FeatureSysVIPC      = "sysv_ipc"            // System V shared memory, queues, semaphores
	FeatureSyscalls     = "syscall_filter"      // dangerous syscalls, foreign architectures
	FeatureDenyWrite    = "deny_write_paths"    // read-only paths inside write grants
	FeatureDenyRead     = "deny_read_paths"     // hidden paths inside grants
	FeatureMounts       = "mounts"              // host paths shown at other paths
	FeatureCamera       = "camera"              // the camera device (macOS)
	FeatureMicrophone   = "microphone"          // the microphone device (macOS)
	FeatureExecWrites   = "exec_write_paths"    // programs in the write paths may run
	FeatureSharedMem    = "shared_memory"       // /dev/shm, private to the sandbox or not
	FeatureGitProtect   = "git_protection"      // a repository's hooks and config read-only (Linux mount layer)
	FeatureGitCommonDir = "git_commondir"       // a .git/commondir the program creates (redirects hooks and config)
	FeaturePrivateTmp   = "private_tmp"         // a private /tmp and /dev/shm (Linux mount layer)
	FeatureWriteNoexec  = "write_paths_noexec"  // nothing written in the write paths can be executed
)

// FeatureTCPAnyPort reports the any-port entries of AllowedTCPConnect
// ("host:*") where they cannot be served to every client: under
// WrapCommand and Run with the Linux egress namespace, only the proxy
// serves them on any port (see [ParseEndpoint]).
const FeatureTCPAnyPort = "tcp_connect_any_port"

// Enforcement says whether one feature of a Config is enforced here.
type Enforcement struct {
	Feature  string `json:"feature"`
	Enforced bool   `json:"enforced"`
	// Detail says how it is enforced, or why it is not.
	Detail string `json:"detail,omitempty"`
	// Hint is a remedy for an unenforced feature, when one exists.
	Hint string `json:"hint,omitempty"`
	// Scope is the entry point this entry is about, when it differs
	// between them: ScopeApplySelf or ScopeCommand (WrapCommand and Run).
	// Empty: every entry point. Strict considers only the entries of the
	// entry point called.
	Scope string `json:"scope,omitempty"`
}

// PathRule is one filesystem rule the sandbox will make.
type PathRule struct {
	Path   string `json:"path"`
	Access string `json:"access"` // platform's own names, e.g. Landlock rights
	Source string `json:"source"` // which Config field or default it comes from
}

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
// enforced under WrapCommand and Run (see [Egress]).
type EgressPlan struct {
	Mode string `json:"mode"` // EgressTransparent, EgressProxy or EgressPortOnly
	// Proxy is the proxy's address as the program sees it, inside its
	// network namespace (EgressTransparent and EgressProxy; "" when
	// there is none).
	Proxy string   `json:"proxy,omitempty"`
	Hosts []string `json:"hosts"` // the host entries, "host:port" or "host:*"
	// AnyPort lists the host entries for every port ("host:*"). With
	// EgressTransparent and EgressProxy the proxy serves them on any
	// port, host-exact; direct clients reach them only on the ports of
	// the other entries (EgressTransparent), so they are reported as
	// granted in part (tcp_connect_any_port; Strict refuses).
	AnyPort []string `json:"any_port,omitempty"`
	// Reason says, for EgressPortOnly, why host names are not enforced;
	// for EgressProxy under a namespace that could have the transparent
	// path, why it does not.
	Reason string `json:"reason,omitempty"`
	// Clients says which clients reach the allowed hosts: with
	// EgressTransparent every TCP client as it dials; with EgressProxy
	// only clients that use the proxy variables.
	Clients string `json:"clients,omitempty"`
}

// EgressPlan.Mode values.
const (
	// EgressProxy: a network namespace with only loopback, and a proxy
	// the caller serves that allows only the listed hosts.
	EgressProxy = "namespace+proxy"
	// EgressTransparent: a network namespace with only loopback in which
	// every address is local; the caller relays each direct TCP connection
	// to an allowed host and port (any client, as it dials), answers DNS
	// for the allowed names, and serves the proxy too (Proxy is its
	// address) for clients that use it.
	EgressTransparent = "namespace+transparent"
	// EgressPortOnly: Landlock's port rules; any host on those ports.
	EgressPortOnly = "port-only"
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

// strictError returns an error wrapping ErrNotEnforced that names every
// unenforced feature of WrapCommand (entries without a Scope or with
// ScopeCommand), or nil.
func (p Plan) strictError() error { return p.strictErrorIn(ScopeCommand) }

// strictErrorIn is strictError for the entry point scope.
func (p Plan) strictErrorIn(scope string) error {
	var ne []Enforcement
	for _, f := range p.NotEnforced() {
		if f.Scope == "" || f.Scope == scope {
			ne = append(ne, f)
		}
	}
	if len(ne) == 0 {
		return nil
	}
	parts := make([]string, len(ne))
	for i, f := range ne {
		parts[i] = f.Feature + " (" + f.Detail + ")"
	}
	return fmt.Errorf("%w: %s", ErrNotEnforced, strings.Join(parts, "; "))
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

// checkApplicable is the common gate of ApplySelf and WrapCommand: the
// mechanism must be there, and under Strict nothing may be left unenforced.
// It checks the entries of WrapCommand (ScopeCommand); an ApplySelf whose
// plan has entries scoped to it calls checkApplicableIn.
func checkApplicable(p Plan, cfg Config) error { return checkApplicableIn(p, cfg, ScopeCommand) }

// checkApplicableIn is checkApplicable for the entry point scope.
func checkApplicableIn(p Plan, cfg Config, scope string) error {
	if !p.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, p.Reason)
	}
	if cfg.Strict {
		return p.strictErrorIn(scope)
	}
	return nil
}

// layerFeatures reports the Config fields that need a layer this build does
// not have on the platform: the mount-namespace layer (deny paths, mounts)
// everywhere, and device permissions (camera, microphone) everywhere but
// macOS. Each requested one is listed as not enforced with its reason, so
// that Strict refuses it and PlanFor names it. Platforms that enforce one of
// these report it themselves and do not call this for it.
func layerFeatures(rc *resolvedConfig, devices bool) []Enforcement {
	var out []Enforcement
	noLayer := "needs the mount-namespace layer under WrapCommand and Run, which this version does not have on " + runtime.GOOS
	if len(rc.denyWrite) > 0 {
		out = append(out, Enforcement{Feature: FeatureDenyWrite, Detail: "not enforced: " + strings.Join(rc.denyWrite, ", ") + " stay writable where a write path covers them: " + noLayer})
	}
	if len(rc.denyRead) > 0 {
		out = append(out, Enforcement{Feature: FeatureDenyRead, Detail: "not enforced: " + strings.Join(rc.denyRead, ", ") + " stay readable where a grant covers them: " + noLayer})
	}
	if len(rc.mounts) > 0 {
		out = append(out, Enforcement{Feature: FeatureMounts, Detail: "not enforced: no path is shown elsewhere: " + noLayer})
	}
	if devices {
		noDevice := runtime.GOOS + " has no camera or microphone permission of its own: grant the device paths instead"
		if rc.cfg.AllowCamera {
			out = append(out, Enforcement{Feature: FeatureCamera, Detail: "not enforceable: " + noDevice})
		}
		if rc.cfg.AllowMicrophone {
			out = append(out, Enforcement{Feature: FeatureMicrophone, Detail: "not enforceable: " + noDevice})
		}
	}
	return out
}

// toolchainFeaturesElsewhere reports the toolchain switches on platforms
// that do not implement them yet (all but Linux).
func toolchainFeaturesElsewhere(rc *resolvedConfig) []Enforcement {
	var out []Enforcement
	if rc.cfg.AllowExecWritePaths {
		out = append(out, Enforcement{Feature: FeatureExecWrites, Detail: "not implemented on " + runtime.GOOS + ": write paths follow the platform's exec rules; grant them with the exec allowlist"})
	}
	if rc.cfg.AllowSharedMemory {
		out = append(out, Enforcement{Feature: FeatureSharedMem, Detail: "not implemented on " + runtime.GOOS})
	}
	return out
}

// unavailablePlan is the plan of a platform whose mechanism is missing:
// every requested feature is reported as not enforced.
func unavailablePlan(mechanism, reason string) Plan {
	p := Plan{Platform: runtime.GOOS, Mechanism: mechanism, Reason: reason}
	for _, f := range []string{FeatureFilesystem, FeatureExec, FeatureTCPConnect, FeatureTCPBind, FeatureSpawn} {
		p.Features = append(p.Features, Enforcement{Feature: f, Detail: "sandbox unavailable: " + reason})
	}
	return p
}
