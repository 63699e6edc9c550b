package linux

// The Linux plan as data: what a linuxPolicy enforces on this kernel, entry
// by entry, and the rules it makes (PlanFor, the CLI's plan command).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spec"
)

// kernelHint names the first kernel with a Landlock ABI.
func kernelHint(abi int) string {
	k := map[int]string{1: "5.13", 2: "5.19", 3: "6.2", 4: "6.7", 5: "6.10", 6: "6.12", 7: "6.15"}[abi]
	if k == "" {
		return "a newer kernel"
	}
	return "Linux " + k + "+"
}

func needABI(abi int) string {
	return fmt.Sprintf("needs Landlock ABI %d (%s)", abi, kernelHint(abi))
}

// linuxPlan reports what p enforces, given whether Landlock (abi > 0) and
// seccomp are there. landlockReason explains an ABI of 0.
func linuxPlan(rc *spec.Resolved, p linuxPolicy, seccompOK bool, landlockReason string) spec.Plan {
	var creds selfCreds
	if !rc.Config.Limits.IsZero() {
		// The credentials ApplySelf's rlimits will live with: today the
		// caller's own. An ApplySelf that drops capabilities before the
		// target code runs must pass them as they will be after the
		// drop. Read only when there is a limit to report.
		creds = currentCreds()
	}
	return linuxPlanCreds(rc, p, seccompOK, landlockReason, creds)
}

// linuxPlanCreds is linuxPlan for a caller with the credentials creds,
// which the limits' entries read (PlanSpawn's, gathered with the host's
// facts: Host.Creds).
func linuxPlanCreds(rc *spec.Resolved, p linuxPolicy, seccompOK bool, landlockReason string, creds selfCreds) spec.Plan {
	cfg := rc.Config
	plan := spec.Plan{Platform: "linux", Mechanism: spec.ModeLandlock, Version: p.ABI, Available: p.ABI >= 1 && seccompOK, Skipped: p.Skipped}
	var missing []string
	if p.ABI < 1 {
		missing = append(missing, "Landlock: "+landlockReason)
	}
	if !seccompOK {
		missing = append(missing, "seccomp: not supported by this kernel (CONFIG_SECCOMP_FILTER)")
	}
	plan.Reason = strings.Join(missing, "; ")

	planFiles(&plan, p)
	planTCP(&plan, rc, p)
	planSockets(&plan, cfg, p)
	planSystem(&plan, cfg, p)
	planLayerAndLimits(&plan, rc, p, creds)
	return plan
}

// upgradeHint is the hint of an entry that a newer Landlock ABI would enforce.
const upgradeHint = "upgrade the kernel"

// featureAdder returns a function that appends an entry to plan, or, where
// the sandbox is unavailable, the entry as not enforced, with plan.Reason.
func featureAdder(plan *spec.Plan) func(feature string, enforced bool, detail, hint string) {
	return func(feature string, enforced bool, detail, hint string) {
		if !plan.Available {
			enforced, hint = false, ""
			detail = "sandbox unavailable: " + plan.Reason
		}
		plan.Features = append(plan.Features, spec.Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
}

// planFiles reports the filesystem's entries: access, truncate, device
// ioctls, execute and the dynamic loader.
func planFiles(plan *spec.Plan, p linuxPolicy) {
	f := featureAdder(plan)
	f(spec.FeatureFilesystem, true, "Landlock: read, write and execute only on granted paths", "")
	if p.ABI >= 3 {
		f(spec.FeatureTruncate, true, "Landlock: truncate only inside write paths", "")
	} else {
		f(spec.FeatureTruncate, false, "truncate(2) of files outside write paths is not restricted: "+needABI(3), upgradeHint)
	}
	if p.ABI >= 5 {
		f(spec.FeatureIoctlDev, true, "Landlock: ioctl only on granted devices", "")
	} else {
		f(spec.FeatureIoctlDev, false, "ioctl on device files opened under granted paths is not restricted: "+needABI(5), upgradeHint)
	}
	f(spec.FeatureExec, true, pick(p.Seccomp.AllowExec, "Landlock: execute only on the exec allowlist and its interpreters",
		"seccomp: execve and execveat denied (empty exec allowlist)"), "")
	if len(p.Loaders) > 0 && p.ExecAfterStart {
		// Landlock checks execute on the file execve names, and on the
		// ELF interpreter the kernel then maps; it cannot tell the loader
		// started as an interpreter from the loader started directly,
		// which then maps any file it can read.
		f(spec.FeatureExecLoader, false, "the dynamic loader "+strings.Join(p.Loaders, ", ")+
			" is executable, as the dynamically linked programs granted need it: run directly (\"loader /any/file\") it runs any ELF file the program can read, "+
			"so for ELF files the exec allowlist holds only as far as read access does"+
			pick(p.Layer.used(), " (under WrapCommand and Run the mount layer mounts the write paths noexec: nothing the program writes runs this way)",
				" (the mount layer's noexec write paths are not in force)"),
			"grant only statically linked programs; or, under WrapCommand and Run, no exec paths and no process spawn: then nothing can be executed once the target runs")
	}
}

// planTCP reports TCP connect and bind, and ApplySelf's host entries.
func planTCP(plan *spec.Plan, rc *spec.Resolved, p linuxPolicy) {
	f := featureAdder(plan)
	tcp := len(rc.Connect) > 0 || len(rc.Bind) > 0
	switch {
	case !tcp:
		f(spec.FeatureTCPConnect, true, "seccomp: no TCP granted, IP sockets denied", "")
		f(spec.FeatureTCPBind, true, "seccomp: no TCP granted, IP sockets denied", "")
	case p.ABI >= 4:
		if len(p.ConnectAnyPort) > 0 {
			e := anyPortConnect(rc)
			f(e.Feature, e.Enforced, e.Detail, e.Hint)
		} else {
			f(spec.FeatureTCPConnect, true, portRule("connect", p.Connect), "")
		}
		f(spec.FeatureTCPBind, true, portRule("bind", p.Bind), "")
	default:
		f(spec.FeatureTCPConnect, false, "TCP ports are not restricted: "+needABI(4)+"; any host and port is reachable", upgradeHint)
		f(spec.FeatureTCPBind, false, "TCP bind is not restricted: "+needABI(4), upgradeHint)
	}
	var hosts []string
	for _, ep := range rc.Connect {
		if !ep.AnyHost() {
			hosts = append(hosts, ep.String())
		}
	}
	if len(hosts) > 0 {
		// ApplySelf's: a process that confines itself keeps its network
		// namespace. WrapCommand's and Run's entry (ScopeCommand) is the
		// egress layer's: see egressPlan.feature.
		on := " allow any host on those ports"
		if len(p.ConnectAnyPort) > 0 {
			on = " allow any host on those ports (any port for an entry \"host:*\")"
		}
		e := spec.Enforcement{Feature: spec.FeatureTCPHost, Scope: spec.ScopeApplySelf,
			Detail: "ApplySelf: Landlock filters ports, not hosts: " + strings.Join(hosts, ", ") + on,
			Hint:   `run the program with WrapCommand or Run, where a network namespace and the caller's proxy enforce host names; or write "*:PORT" to state what is enforced`}
		if !plan.Available {
			e.Detail, e.Hint = "sandbox unavailable: "+plan.Reason, ""
		}
		plan.Features = append(plan.Features, e)
	}
}

// planSockets reports UDP, unix sockets, the Landlock scopes and spawn.
func planSockets(plan *spec.Plan, cfg spec.Config, p linuxPolicy) {
	f := featureAdder(plan)
	if cfg.AllowUDP {
		f(spec.FeatureUDP, true, "granted: UDP sockets to any host and port", "")
	} else {
		f(spec.FeatureUDP, true, "seccomp: UDP sockets denied", "")
	}
	switch {
	case !cfg.AllowUnixSockets:
		f(spec.FeatureUnixSockets, true, "seccomp: AF_UNIX sockets denied (socketpair allowed)", "")
	case p.ABI >= 9:
		f(spec.FeatureUnixSockets, true, "Landlock: connect only to unix sockets inside write paths", "")
	default:
		f(spec.FeatureUnixSockets, false, "connect to any pathname unix socket (e.g. /var/run/docker.sock) is not restricted: "+needABI(9), upgradeHint)
	}
	switch {
	case p.ABI >= 6:
		f(spec.FeatureScopeUnix, true, "Landlock: abstract unix sockets scoped to the sandbox", "")
	case !cfg.AllowUnixSockets:
		f(spec.FeatureScopeUnix, true, "seccomp: AF_UNIX sockets denied", "")
	default:
		f(spec.FeatureScopeUnix, false, "abstract unix sockets outside the sandbox are reachable: "+needABI(6), upgradeHint)
	}
	if p.ABI >= 6 {
		f(spec.FeatureScopeSignal, true, "Landlock: signals only to processes in the sandbox", "")
	} else {
		f(spec.FeatureScopeSignal, false, "signals to other processes of the same user are not restricted: "+needABI(6), upgradeHint)
	}
	f(spec.FeatureSpawn, true, pick(cfg.AllowProcessSpawn, "granted: children inherit the sandbox",
		"seccomp: fork, vfork and clone of a process denied"), "")
}

// planSystem reports file metadata, System V IPC, the syscall filter,
// executable write paths and shared memory.
func planSystem(plan *spec.Plan, cfg spec.Config, p linuxPolicy) {
	f := featureAdder(plan)
	for _, e := range metadataPlan(cfg, p.Seccomp, p.Layer) {
		if !plan.Available {
			e.Enforced, e.Hint = false, ""
			e.Detail = "sandbox unavailable: " + plan.Reason
		}
		plan.Features = append(plan.Features, e)
	}
	if cfg.AllowSysVIPC {
		plan.Features = append(plan.Features, sysvIPCPlan(p.IPCNamespace, plan.Available, plan.Reason)...)
	} else {
		f(spec.FeatureSysVIPC, true, "seccomp: System V shared memory, message queues and semaphores, and POSIX message queues, denied", "")
	}
	f(spec.FeatureSyscalls, true, "seccomp on every thread: dangerous syscalls, i386 and x32 entry denied", "")
	if cfg.AllowExecWritePaths {
		f(spec.FeatureExecWrites, true, "granted: Landlock execute on every write path (allow_exec_write_paths), with the ELF interpreters", "")
	}
	if cfg.AllowSharedMemory {
		const shared = "/dev/shm is granted read-write and is the host's: the program can read and change the shared memory and semaphores of every process of its user there"
		const shmHint = "grant it only to programs that need POSIX shared memory or semaphores (Python multiprocessing)"
		if p.Layer.used() {
			plan.Features = append(plan.Features,
				spec.Enforcement{Feature: spec.FeatureSharedMem, Scope: spec.ScopeApplySelf, Detail: "ApplySelf: " + shared, Hint: shmHint},
				spec.Enforcement{Feature: spec.FeatureSharedMem, Scope: spec.ScopeCommand, Enforced: plan.Available,
					Detail: "WrapCommand/Run: /dev/shm is a private tmpfs (mount layer), granted read-write"})
		} else {
			f(spec.FeatureSharedMem, false, shared+"; "+layerMissing(p.Layer), shmHint)
		}
	}
}

// planLayerAndLimits reports the mount layer's entries and the limits, for
// a caller with the credentials creds.
func planLayerAndLimits(plan *spec.Plan, rc *spec.Resolved, p linuxPolicy, creds selfCreds) {
	plan.Features = append(plan.Features, slices.DeleteFunc(spec.LayerFeatures(rc, "linux", true), func(e spec.Enforcement) bool {
		return e.Feature == spec.FeatureDenyWrite || e.Feature == spec.FeatureDenyRead || e.Feature == spec.FeatureMounts ||
			e.Feature == spec.FeaturePrivateRoot
	})...)
	plan.Features = append(plan.Features, mountLayerFeatures(rc, p.Layer, plan.Available)...)
	if plan.Available {
		// Without limits there is nothing to report: neither the cgroups
		// nor the credentials (the caller's hard limits) are looked at.
		if !rc.Config.Limits.IsZero() {
			cg := rc.Cgroup
			if cg == nil {
				a, _ := commandCgroup(rc.Config.Limits)
				cg = &a
			}
			plan.Features = append(plan.Features, linuxLimitFeatures(rc, creds, *cg)...)
		}
	} else {
		plan.Features = append(plan.Features, spec.UnenforcedLimits(rc, "sandbox unavailable: "+plan.Reason)...)
	}
}

// metadataPlan says what keeps a program off the mode, owner, times and
// extended attributes of files outside its grants, which Landlock does not
// mediate, as one entry per entry point (WrapCommand's and Run's first:
// Plan.Describe reads a feature's first entry).
//
// ApplySelf's policy (sp.DenyPathMetadata, forSelf) refuses every by-path
// form with seccomp: its entry is ScopeApplySelf's. WrapCommand's and
// Run's policy refuses chown and xattr writes by path and leaves chmod and
// utimes by path of the user's own files (dropped capabilities keep root
// to its own files too, which for root are most system files) to the
// mount-namespace layer's read-only mounts (EROFS everywhere outside the
// write paths), where that layer is used (layer): its entry is
// ScopeCommand's, and it is the only one in WrapCommand's own plan (whose
// policy is not DenyPathMetadata). PlanFor, whose policy is ApplySelf's
// and whose layer is the one WrapCommand would use from the caller's
// working directory, gets both; ApplySelf's own check (layer nil, never
// looked at) only its own. Everywhere, no set-user-ID or set-group-ID bit
// can be set.
func metadataPlan(cfg spec.Config, sp seccomp.Policy, layer *mountLayer) []spec.Enforcement {
	const setid = "; no set-user-ID or set-group-ID bit can be set anywhere"
	chown := "chown and extended attribute writes by path refused"
	if cfg.AllowChown {
		chown = "allow_chown: chown and extended attribute writes by path reach files outside the grants"
	}
	var out []spec.Enforcement
	if !sp.DenyPathMetadata || layer != nil {
		e := spec.Enforcement{Feature: spec.FeatureMetadata, Scope: spec.ScopeCommand}
		switch {
		case layer.used() && cfg.AllowChown:
			e.Detail = "WrapCommand/Run: everything outside the write paths is a read-only mount (chmod, chown, utimes, xattrs: EROFS); " +
				chown + " inside the write paths" + setid
			e.Hint = "leave allow_chown off"
		case layer.used():
			e.Enforced = true
			e.Detail = "WrapCommand/Run: everything outside the write paths is a read-only mount (mount layer): chmod, chown, utimes " +
				"and extended attribute writes there fail with EROFS; " + chown + setid
		default:
			e.Detail = "WrapCommand/Run: chmod and utimes by path of files the user owns outside the grants are NOT restricted " +
				"(Landlock has no hook for them, and " + layerMissing(layer) + "; for root, whose capabilities are dropped, that is still most system files); " +
				chown + setid + "; ApplySelf refuses all of them by path"
			e.Hint = layerHint(layer, "confine the program with ApplySelf, or grant it nothing the user owns that matters")
		}
		out = append(out, e)
	}
	if sp.DenyPathMetadata {
		e := spec.Enforcement{Feature: spec.FeatureMetadata, Scope: spec.ScopeApplySelf, Enforced: !cfg.AllowChown}
		if cfg.AllowChown {
			e.Detail = "ApplySelf: chmod and utimes by path refused; " + chown + setid
			e.Hint = "leave allow_chown off"
		} else {
			e.Detail = "ApplySelf: seccomp refuses chmod, chown, utimes and extended attribute writes by path; their descriptor forms " +
				"(fchmod, fchown, futimens, fsetxattr) work only on files Landlock let the process open" + setid
		}
		out = append(out, e)
	}
	return out
}

// sysvIPCPlan reports AllowSysVIPC: under WrapCommand and Run (first, as
// Describe reads a feature's first entry; only when ns, the namespace
// probe's result, was looked at) System V IPC in a private IPC namespace
// where namespaces can be created, else in the host's; under ApplySelf
// always the host's (a process that confines itself keeps its
// namespaces). The host's IPC namespace is reported as not enforced, as
// /dev/shm is for AllowSharedMemory: the grant then reaches every
// segment, queue and semaphore set of the user's other programs.
func sysvIPCPlan(ns *nsState, available bool, reason string) []spec.Enforcement {
	const host = "System V IPC in the host's IPC namespace: the program can list, attach to and change every segment, queue and semaphore set its user may access, other programs' included, and make and remove POSIX message queues there"
	const hint = "grant allow_sysv_ipc only to programs that need System V IPC (PostgreSQL, some X11 and audio programs)"
	var out []spec.Enforcement
	if ns != nil {
		e := spec.Enforcement{Feature: spec.FeatureSysVIPC, Scope: spec.ScopeCommand}
		if ns.ok {
			e.Enforced = true
			e.Detail = "WrapCommand/Run: granted, in a private IPC namespace: the program makes and uses its own segments, queues and " +
				"semaphore sets (and POSIX message queues, which Landlock still lets it make but not open), which end with it, and reaches none of the host's"
		} else {
			e.Detail = "WrapCommand/Run: " + host + " (new namespaces are unavailable here: " + ns.reason + ")"
			e.Hint = pick(ns.hint != "", ns.hint, hint)
		}
		out = append(out, e)
	}
	out = append(out, spec.Enforcement{Feature: spec.FeatureSysVIPC, Scope: spec.ScopeApplySelf, Detail: "ApplySelf: " + host,
		Hint: "run the program with WrapCommand or Run, which give it a private IPC namespace where namespaces are available; or " + hint})
	if !available {
		for i := range out {
			out[i].Enforced, out[i].Hint = false, ""
			out[i].Detail = "sandbox unavailable: " + reason
		}
	}
	return out
}

// withArtefacts adds to plan the rules p makes, for PlanFor and the CLI's
// plan command; ApplySelf does not need them.
func withArtefacts(plan spec.Plan, p linuxPolicy) spec.Plan {
	for _, r := range p.Paths {
		plan.Paths = append(plan.Paths, spec.PathRule{Path: r.Path, Access: r.Access.String(), Source: r.Source()})
	}
	for _, port := range p.Connect {
		plan.Network = append(plan.Network, "tcp connect port "+strconv.Itoa(int(port)))
	}
	if len(p.ConnectAnyPort) > 0 && p.HandledNet != 0 {
		plan.Network = append(plan.Network, "tcp connect not handled by Landlock (any host, any port), for "+strings.Join(p.ConnectAnyPort, ", "))
	}
	for _, port := range p.Bind {
		plan.Network = append(plan.Network, "tcp bind port "+strconv.Itoa(int(port)))
	}
	plan.Syscalls = seccomp.Summary(p.Seccomp)
	return plan
}

// anyPortConnect is tcp_connect when rc has an any-port entry ("host:*")
// and Landlock (ABI 4+) would otherwise filter ports. Landlock's connect
// rules name a port and never a host, so the only way to grant one host
// every port is to leave TCP connect unhandled: then every host on every
// port is reachable. With "*:*" that is the grant, made exactly
// (enforced); otherwise it is more than the Config grants (not enforced,
// and Strict refuses). Under WrapCommand and Run with the egress
// namespace, egressPlan.addTo scopes this entry to ApplySelf and adds the
// namespace's own.
func anyPortConnect(rc *spec.Resolved) spec.Enforcement {
	var anyPort []string
	for _, ep := range rc.Connect {
		if ep.Unrestricted() {
			return spec.Enforcement{Feature: spec.FeatureTCPConnect, Enforced: true,
				Detail: "granted: *:* is TCP connect to any host on any port: Landlock does not handle TCP connect (outgoing TCP is unrestricted)"}
		}
		if ep.AnyPort {
			anyPort = append(anyPort, ep.String())
		}
	}
	return spec.Enforcement{Feature: spec.FeatureTCPConnect,
		Detail: "TCP connect is not restricted: Landlock's connect rules name ports, not hosts, so " + strings.Join(anyPort, ", ") +
			" (any port) can be granted only by not handling TCP connect: the program can connect to any host on any port",
		Hint: "list the ports the program needs (\"host:443\"); or start it with WrapCommand or Run, whose egress namespace enforces the host " +
			"(any port through the proxy, listed ports for direct clients)"}
}

// portRule says what Landlock allows for op ("connect", "bind").
func portRule(op string, ps []uint16) string {
	if len(ps) == 0 {
		return "Landlock: TCP " + op + " denied (no port granted)"
	}
	return "Landlock: TCP " + op + " only to ports " + ports(ps)
}

func ports(ps []uint16) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ", ")
}
