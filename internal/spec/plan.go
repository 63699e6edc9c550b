package spec

import (
	"fmt"
	"runtime"
	"slices"
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
	FeaturePrivateRoot  = "private_root"        // the sandbox's own root: only the grants are there (Linux mount layer)
)

// FeatureTCPAnyPort reports the any-port entries of AllowedTCPConnect
// ("host:*") where they cannot be served to every client: under
// WrapCommand and Run with the Linux egress namespace, only the proxy
// serves them on any port (see [ParseEndpoint]).
const FeatureTCPAnyPort = "tcp_connect_any_port"

// Feature names of the channels a macOS profile leaves open when it grants
// them: services outside the sandbox that act for the process. Each is
// reported as not enforced whenever it is granted, so Strict refuses it.
const (
	// FeatureResolver: mDNSResponder, granted when a TCP endpoint's host is
	// a DNS name or "*".
	FeatureResolver = "name_resolver"
	// FeatureTLSTrust: com.apple.trustd.agent, granted with a non-loopback
	// TCP endpoint unless Config.NoTLSTrustService.
	FeatureTLSTrust = "tls_trust_service"
	// FeatureUserLookup: com.apple.system.opendirectoryd.libinfo, always
	// granted (getpwuid, getgrgid): listed as a channel, reported enforced
	// (see the detail for what it discloses).
	FeatureUserLookup = "user_lookup_service"
)

// Feature names of the limits in [Plan.Features]. Each requested limit is
// listed once per entry point, with [Enforcement.Scope] set.
const (
	FeatureLimitProcesses = "limit_processes"  // Limits.Processes
	FeatureLimitMemory    = "limit_memory"     // Limits.MemoryBytes
	FeatureLimitCPUTime   = "limit_cpu_time"   // Limits.CPUTime
	FeatureLimitFileSize  = "limit_file_size"  // Limits.FileSizeBytes
	FeatureLimitOpenFiles = "limit_open_files" // Limits.OpenFiles
)

// Values of [Enforcement.Scope]. An Enforcement without a Scope holds for
// every entry point.
const (
	ScopeApplySelf = "apply_self" // Sandbox.ApplySelf
	ScopeCommand   = "command"    // Sandbox.WrapCommand and Run
)

// Mechanism names (Plan.Mechanism, Status.Mode), re-exported by the root
// package as sandbox.Mode*.
const (
	ModeLandlock    = "landlock"
	ModeSandboxExec = "sandbox-exec"
	ModeJobObject   = "job-object"
	ModeNone        = "none"
)

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

// Grants is the Config as resolved, in terms every platform shares
// (sandbox.Grants documents it).
type Grants struct {
	Read        []string `json:"read,omitempty"`
	Write       []string `json:"write,omitempty"`
	Exec        []string `json:"exec,omitempty"`
	Connect     []string `json:"connect,omitempty"` // "host:port", "*" for any host
	Bind        []uint16 `json:"bind,omitempty"`
	Spawn       bool     `json:"spawn,omitempty"`
	UDP         bool     `json:"udp,omitempty"`
	UnixSockets bool     `json:"unix_sockets,omitempty"`
	Camera      bool     `json:"camera,omitempty"`
	Microphone  bool     `json:"microphone,omitempty"`
	DenyWrite   []string `json:"deny_write,omitempty"`
	DenyRead    []string `json:"deny_read,omitempty"`
	Mounts      []Mount  `json:"mounts,omitempty"`
}

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

// StrictError returns an error wrapping ErrNotEnforced that names every
// unenforced feature of the entry point scope (entries without a Scope or
// with that Scope), or nil. The features in accept are not counted: a
// caller passes [Config.StrictAccepts], and nothing else.
func (p Plan) StrictError(scope string, accept ...string) error {
	var ne []Enforcement
	for _, f := range p.NotEnforced() {
		if (f.Scope == "" || f.Scope == scope) && !slices.Contains(accept, f.Feature) {
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

// StrictAcceptable lists the features [Config.StrictAcceptLoader] lets
// Strict accept unenforced: the gaps no Config can close because they come
// with the programs granted, not from a field the caller set. Today that is
// the dynamic loader of a granted, dynamically linked program
// (FeatureExecLoader); nothing the Config asks for is ever on this list.
var StrictAcceptable = []string{FeatureExecLoader}

// StrictAccepts returns the unenforced features Strict accepts for c:
// [StrictAcceptable] with StrictAcceptLoader, else none.
func (c Config) StrictAccepts() []string {
	if c.StrictAcceptLoader {
		return slices.Clone(StrictAcceptable)
	}
	return nil
}

// CheckApplicable is the common gate of ApplySelf and WrapCommand: the
// mechanism must be there, and under Strict nothing of the entry point
// scope may be left unenforced but the features in accept (a caller passes
// [Config.StrictAccepts]).
func CheckApplicable(p Plan, strict bool, scope string, accept ...string) error {
	if !p.Available {
		return fmt.Errorf("%w: %s", ErrUnavailable, p.Reason)
	}
	if strict {
		return p.StrictError(scope, accept...)
	}
	return nil
}

// LayerFeatures reports the Config fields that need a layer this build does
// not have on the platform: the mount-namespace layer (deny paths, mounts,
// private root: the last two are refused, see RefuseViews) everywhere, and device permissions (camera, microphone) everywhere but
// macOS. Each requested one is listed as not enforced with its reason, so
// that Strict refuses it and PlanFor names it. Platforms that enforce one of
// these report it themselves and do not call this for it.
func LayerFeatures(rc *Resolved, goos string, devices bool) []Enforcement {
	var out []Enforcement
	noLayer := "needs the mount-namespace layer under WrapCommand and Run, which this version does not have on " + goos
	if len(rc.DenyWrite) > 0 {
		out = append(out, Enforcement{Feature: FeatureDenyWrite, Detail: "not enforced: " + strings.Join(rc.DenyWrite, ", ") + " stay writable where a write path covers them: " + noLayer})
	}
	if len(rc.DenyRead) > 0 {
		out = append(out, Enforcement{Feature: FeatureDenyRead, Detail: "not enforced: " + strings.Join(rc.DenyRead, ", ") + " stay readable where a grant covers them: " + noLayer})
	}
	if len(rc.Config.Mounts) > 0 {
		out = append(out, Enforcement{Feature: FeatureMounts, Detail: "REFUSED (WrapCommand, Run and ApplySelf fail): no path can be shown elsewhere: " + noLayer})
	}
	if rc.Config.PrivateRoot {
		out = append(out, Enforcement{Feature: FeaturePrivateRoot, Detail: "REFUSED (WrapCommand, Run and ApplySelf fail): the program cannot have a root of its own: " + noLayer})
	}
	if devices {
		noDevice := goos + " has no camera or microphone permission of its own: grant the device paths instead"
		if rc.Config.AllowCamera {
			out = append(out, Enforcement{Feature: FeatureCamera, Detail: "not enforceable: " + noDevice})
		}
		if rc.Config.AllowMicrophone {
			out = append(out, Enforcement{Feature: FeatureMicrophone, Detail: "not enforceable: " + noDevice})
		}
	}
	return out
}

// ToolchainFeaturesElsewhere reports the toolchain switches on platforms
// that do not implement them yet (all but Linux).
func ToolchainFeaturesElsewhere(rc *Resolved, goos string) []Enforcement {
	var out []Enforcement
	if rc.Config.AllowExecWritePaths {
		out = append(out, Enforcement{Feature: FeatureExecWrites, Detail: "not implemented on " + goos + ": write paths follow the platform's exec rules; grant them with the exec allowlist"})
	}
	if rc.Config.AllowSharedMemory {
		out = append(out, Enforcement{Feature: FeatureSharedMem, Detail: "not implemented on " + goos})
	}
	return out
}

// RequestedLimits lists the features of the limits l sets, in a fixed
// order: processes, memory, CPU time, file size, open files.
func RequestedLimits(l Limits) []string {
	var out []string
	if l.Processes > 0 {
		out = append(out, FeatureLimitProcesses)
	}
	if l.MemoryBytes > 0 {
		out = append(out, FeatureLimitMemory)
	}
	if l.CPUTime > 0 {
		out = append(out, FeatureLimitCPUTime)
	}
	if l.FileSizeBytes > 0 {
		out = append(out, FeatureLimitFileSize)
	}
	if l.OpenFiles > 0 {
		out = append(out, FeatureLimitOpenFiles)
	}
	return out
}

// UnenforcedLimits reports every requested limit as not enforced for every
// entry point, with why, for platforms that enforce none.
func UnenforcedLimits(rc *Resolved, why string) []Enforcement {
	var out []Enforcement
	for _, f := range RequestedLimits(rc.Config.Limits) {
		out = append(out, Enforcement{Feature: f, Detail: "not enforced: " + why})
	}
	return out
}

// UnavailablePlan is the plan of a platform whose mechanism is missing:
// every requested feature is reported as not enforced.
func UnavailablePlan(mechanism, reason string) Plan {
	p := Plan{Platform: runtime.GOOS, Mechanism: mechanism, Reason: reason}
	for _, f := range []string{FeatureFilesystem, FeatureExec, FeatureTCPConnect, FeatureTCPBind, FeatureSpawn} {
		p.Features = append(p.Features, Enforcement{Feature: f, Detail: "sandbox unavailable: " + reason})
	}
	return p
}

// Cgroup is what WrapCommand and Run can use of a cgroup here, as data for
// the plan (the Linux engine detects it). The zero value is "no cgroup".
type Cgroup struct {
	Version           string // "cgroup v1" or "cgroup v2"; "" when none can be managed
	Pids, Memory, CPU bool   // Processes, MemoryBytes and CPUTime can be enforced by it
	Swap              string // how swap is kept out of MemoryBytes, for the plan
	Why               string // why there is none, or why a controller is missing
	// Where is the directory (one per v1 hierarchy, comma-separated) the
	// trees' cgroups are made in (cgroup.Manager.Parents + DirName), for
	// the plan.
	Where string
}
