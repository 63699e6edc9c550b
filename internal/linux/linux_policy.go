package linux

// The Linux policy as data: which Landlock rules and which seccomp filter a
// Config becomes on a kernel with a given Landlock ABI. Nothing here calls
// into the kernel, so it compiles and is tested on every OS; apply_linux.go
// applies the result.

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spec"
)

// Landlock access right sets, named for what they grant.
const (
	llRead      landlock.AccessFSSet = ll.AccessFSReadFile
	llReadDir   landlock.AccessFSSet = ll.AccessFSReadFile | ll.AccessFSReadDir
	llWriteFile landlock.AccessFSSet = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	// llWriteDir: everything inside a directory except making device nodes.
	llWriteDir landlock.AccessFSSet = llReadDir | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
		ll.AccessFSMakeSym | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSRefer
	llExecFile landlock.AccessFSSet = ll.AccessFSReadFile | ll.AccessFSExecute
	llExecDir  landlock.AccessFSSet = llReadDir | ll.AccessFSExecute
	// llDevice: a character device the process reads and writes, with
	// ioctls (a terminal needs TCGETS and friends; TIOCSTI is denied by
	// seccomp regardless).
	llDevice landlock.AccessFSSet = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// SystemPath is a path every sandboxed process is granted on Linux.
type SystemPath struct {
	Path   string `json:"path"`
	Write  bool   `json:"write"` // read and write (devices); otherwise read-only
	Reason string `json:"reason"`
}

// SystemPaths lists, in one place, what every sandboxed process on Linux may
// access besides its Config. Shared libraries are read-only: mapping a library
// needs read, not execute, and Landlock's execute right is only checked by
// execve. Paths absent on a machine are skipped and listed in Plan.Skipped.
var SystemPaths = []SystemPath{
	{Path: "/usr/lib", Reason: "shared libraries, loader, locale archives"},
	{Path: "/lib", Reason: "shared libraries (often a link to /usr/lib)"},
	{Path: "/lib64", Reason: "the ELF interpreter on x86-64"},
	{Path: "/usr/lib64", Reason: "shared libraries on lib64 distributions"},
	{Path: "/etc/ld.so.cache", Reason: "dynamic loader cache"},
	{Path: "/etc/ld.so.conf", Reason: "dynamic loader configuration"},
	{Path: "/etc/ld.so.conf.d", Reason: "dynamic loader configuration"},
	{Path: "/etc/hosts", Reason: "resolving localhost"},
	{Path: "/etc/resolv.conf", Reason: "DNS resolver configuration"},
	{Path: "/etc/nsswitch.conf", Reason: "name service order"},
	{Path: "/etc/host.conf", Reason: "resolver options"},
	{Path: "/etc/gai.conf", Reason: "address sorting for getaddrinfo"},
	{Path: "/etc/ssl/certs", Reason: "system CA certificates"},
	{Path: "/usr/share/ca-certificates", Reason: "CA certificates /etc/ssl/certs links to"},
	{Path: "/etc/pki/tls/certs", Reason: "system CA certificates (Fedora family)"},
	{Path: "/etc/localtime", Reason: "local time zone"},
	{Path: "/etc/timezone", Reason: "local time zone name"},
	{Path: "/usr/share/zoneinfo", Reason: "time zone database"},
	{Path: "/usr/share/locale", Reason: "message catalogs"},
	{Path: "/dev/null", Write: true, Reason: "the null device"},
	{Path: "/dev/zero", Write: true, Reason: "zero source (also mapped by some allocators)"},
	{Path: "/dev/full", Write: true, Reason: "the full device"},
	{Path: "/dev/urandom", Reason: "randomness"},
	{Path: "/dev/random", Reason: "randomness"},
	{Path: "/dev/tty", Write: true, Reason: "the controlling terminal"},
	{Path: "/proc/self", Reason: "the process's own /proc entries (resolved to /proc/<pid>; not other processes')"},

	// Toolchains: what compilers, interpreters and version control read
	// on every run. Each entry is package data or system-wide
	// configuration that is world-readable and names no user; never a
	// directory that also holds keys (/etc/ssl, not /etc/ssl/private),
	// nor a file where per-user or registry credentials are kept
	// (/etc/npmrc, /etc/pip.conf and the like are left out).
	{Path: "/usr/share", Reason: "architecture-independent package data: perl and python modules, python-wheels for venv, git templates, terminfo, zoneinfo, locale"},
	{Path: "/usr/include", Reason: "C and C++ headers for compilers"},
	{Path: "/usr/local/include", Reason: "locally installed headers"},
	{Path: "/usr/local/lib", Reason: "locally installed libraries and site-packages"},
	{Path: "/usr/local/share", Reason: "locally installed package data"},
	{Path: "/usr/libexec", Reason: "helper programs of installed packages (read; executing them needs an exec grant)"},
	{Path: "/etc/ssl/openssl.cnf", Reason: "OpenSSL configuration (node and python read it at start-up); /etc/ssl/private stays denied"},
	{Path: "/etc/gitconfig", Reason: "git's system-wide configuration"},
	{Path: "/etc/debian_version", Reason: "distribution version (python venv, build scripts)"},
	{Path: "/etc/os-release", Reason: "distribution identification"},
	{Path: "/etc/lsb-release", Reason: "distribution identification"},
	{Path: "/etc/perl", Reason: "Debian's perl configuration and modules (in @INC)"},
	{Path: "/etc/python3", Reason: "Debian's python configuration"},
	{Path: "/etc/python3.8", Reason: "Debian's sitecustomize for Python 3.8"},
	{Path: "/etc/python3.9", Reason: "Debian's sitecustomize for Python 3.9"},
	{Path: "/etc/python3.10", Reason: "Debian's sitecustomize for Python 3.10"},
	{Path: "/etc/python3.11", Reason: "Debian's sitecustomize for Python 3.11"},
	{Path: "/etc/python3.12", Reason: "Debian's sitecustomize for Python 3.12"},
	{Path: "/etc/python3.13", Reason: "Debian's sitecustomize for Python 3.13"},
	{Path: "/etc/python3.14", Reason: "Debian's sitecustomize for Python 3.14"},
	{Path: "/etc/terminfo", Reason: "terminal descriptions"},
	{Path: "/etc/inputrc", Reason: "readline configuration"},
	{Path: "/etc/mime.types", Reason: "file type table"},
	{Path: "/etc/magic", Reason: "file(1) type table"},
	{Path: "/proc/cpuinfo", Reason: "CPU count and features (node's os.cpus, nproc fallbacks, runtimes sizing thread pools)"},
	{Path: "/proc/meminfo", Reason: "memory size (runtimes sizing heaps, free, ps)"},
	{Path: "/proc/stat", Reason: "CPU times and boot time (node's os.cpus, ps); host-wide counters, no per-process data"},
	{Path: "/proc/loadavg", Reason: "load average (build tools throttling parallel jobs)"},
	{Path: "/proc/uptime", Reason: "system uptime (ps, time measurements)"},
	{Path: "/proc/version", Reason: "kernel version string"},
	{Path: "/proc/filesystems", Reason: "filesystem types (libselinux, ls, mount helpers)"},
	{Path: "/sys/devices/system/cpu", Reason: "CPU topology and online set (sysconf(_SC_NPROCESSORS_ONLN), node, Go, OpenMP)"},
}

// elfInterpreters are the dynamic loaders granted execute when a directory is
// on the exec allowlist (the loader of each binary inside cannot be known in
// advance). A granted file gets exactly its own PT_INTERP.
var elfInterpreters = []string{
	"/lib64/ld-linux-x86-64.so.2",
	"/lib/ld-linux-aarch64.so.1",
	"/lib/ld-musl-x86_64.so.1",
	"/lib/ld-musl-aarch64.so.1",
}

// sharedMemoryDir is where glibc keeps POSIX shared memory and named
// semaphores (see Config.AllowSharedMemory).
const sharedMemoryDir = "/dev/shm"

// inChild, as buildLinuxPolicy's procSelf, says the rules are made in
// another process, which looks at the paths itself.
const inChild = ""

// linuxRule is one Landlock path rule.
type linuxRule struct {
	Path   string
	Access landlock.AccessFSSet
	Source string
}

// systemRule is a default path (see [SystemPaths]) that is looked at only
// when the rule is made: Dir is granted if it is a directory then, File if
// it is anything else, and nothing if it does not exist.
type systemRule struct {
	Path      string
	Dir, File landlock.AccessFSSet
}

// linuxPolicy is a Config turned into Landlock and seccomp terms for one ABI.
type linuxPolicy struct {
	ABI        int
	HandledFS  landlock.AccessFSSet
	HandledNet landlock.AccessNetSet
	Scoped     landlock.ScopedSet
	Paths      []linuxRule
	System     []systemRule // only when built for another process; see buildLinuxPolicy
	Connect    []uint16     // TCP ports, deduplicated
	// ConnectAnyPort lists the any-port entries ("host:*"). When there is
	// one, HandledNet leaves out TCP connect (any host, any port) and
	// Connect is empty, until WrapCommand's egress namespace restores it.
	ConnectAnyPort []string
	Bind           []uint16
	Seccomp        seccomp.Policy
	Skipped        []string
	// Loaders are the dynamic loaders (ELF interpreters) given execute,
	// and ExecAfterStart says whether anything can still be executed once
	// the sandboxed program runs: together they decide whether the exec
	// allowlist holds for ELF files (see linuxPlan's exec_loader).
	Loaders        []string
	ExecAfterStart bool
	// Layer is the mount-namespace layer WrapCommand and Run would use
	// (see mountlayer_linux.go); nil where it was not looked at.
	Layer *mountLayer
	// IPCNamespace is, for a Config with AllowSysVIPC, whether WrapCommand
	// and Run can start the program in new namespaces here (the
	// namespace probe's result), which always include a private IPC
	// namespace (nsAttr); nil where it was not looked at (ApplySelf, and
	// Configs without AllowSysVIPC, whose System V IPC seccomp refuses).
	IPCNamespace *nsState
}

// landlockABIConfigs are go-landlock's per-ABI sets; index = ABI version.
var landlockABIConfigs = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3,
	landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9,
	landlock.V10, landlock.V11}

func landlockABIConfig(abi int) landlock.Config {
	abi = max(0, min(abi, len(landlockABIConfigs)-1))
	return landlockABIConfigs[abi]
}

// buildLinuxPolicy turns rc into rules for Landlock ABI abi. procSelf is what
// /proc/self resolves to in the process that will be restricted, or
// inChild when that process will make its rules itself (WrapCommand's
// trampoline). exec names extra files that must be executable (the
// WrapCommand target).
//
// With inChild, the default paths and the interpreters are not looked at
// here: they become System rules, and interpreters Paths rules with file
// rights, which the child makes by what it finds when it opens them.
// Looking at them here would cost every spawn a stat per path, to tell the
// child what it learns anyway from the descriptor it opens.
func buildLinuxPolicy(rc *spec.Resolved, abi int, procSelf string, exec []string) linuxPolicy {
	abiCfg := landlockABIConfig(abi)
	p := linuxPolicy{ABI: abi, HandledFS: abiCfg.HandledAccessFS}
	cfg := rc.Config

	if abi >= 4 {
		p.HandledNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 10 && !cfg.AllowUDP {
		// Defence in depth: seccomp already refuses UDP sockets.
		p.HandledNet |= ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
	}
	p.Scoped = abiCfg.Scoped

	add := func(path string, access landlock.AccessFSSet, source string) {
		access &= p.HandledFS
		if access == 0 {
			return
		}
		for i := range p.Paths {
			if p.Paths[i].Path == path {
				p.Paths[i].Access |= access
				p.Paths[i].Source += ", " + source
				return
			}
		}
		p.Paths = append(p.Paths, linuxRule{Path: path, Access: access, Source: source})
	}

	// System paths are kept as written, not resolved: a rule is made by
	// opening its path, which follows symlinks, so it applies to what the
	// path names when the sandbox is applied (for WrapCommand, in the
	// child).
	if procSelf == inChild {
		for _, sp := range SystemPaths {
			p.System = append(p.System, systemRule{Path: sp.Path,
				Dir: llReadDir & p.HandledFS, File: pick(sp.Write, llDevice, llRead) & p.HandledFS})
		}
	} else {
		p.statSystemPaths(procSelf, add)
	}

	unixRight := landlock.AccessFSSet(0)
	if cfg.AllowUnixSockets {
		unixRight = ll.AccessFSResolveUnix
	}
	for _, rp := range rc.Read {
		add(rp.Resolved, pick(rp.IsDir, llReadDir, llRead), "allowed_read_paths")
	}
	for _, rp := range rc.Write {
		add(rp.Resolved, pick(rp.IsDir, llWriteDir|unixRight, llWriteFile), "allowed_write_paths")
	}
	execPaths := slices.Clone(rc.Exec)
	for _, e := range exec {
		execPaths = append(execPaths, spec.Path{Given: e, Resolved: e})
	}
	writePaths := make([]string, len(rc.Write))
	for i, w := range rc.Write {
		writePaths[i] = w.Resolved
	}
	for _, rp := range execPaths {
		add(rp.Resolved, pick(rp.IsDir, llExecDir, llExecFile), "allowed_exec_paths")
		var interps []string
		if rp.IsDir {
			for _, in := range elfInterpreters {
				if r, err := execgrant.Grantable(in, writePaths); err == nil {
					interps = append(interps, r)
					p.addLoader(r)
				}
			}
		} else {
			var loader string
			interps, loader = execgrant.Chain(rp.Resolved, writePaths)
			p.addLoader(loader)
		}
		for _, in := range interps {
			// Each is a regular executable file outside the write paths,
			// named by its resolved path (execgrant.Grantable).
			add(in, llExecFile, "interpreter of "+rp.Resolved)
		}
	}

	// What the exec grants mean beyond their own paths (see
	// execgrant.Extras), each rule with its reason. Interpreters follow the
	// rule above (execgrant.Grantable); a symlink target or helper
	// directory inside a write path is not granted: the program could
	// rewrite it and run what it wrote.
	grantInterps := func(cands []string, loaders []string, why string) {
		for _, in := range cands {
			if r, err := execgrant.Grantable(in, writePaths); err == nil {
				add(r, llExecFile, "interpreter of "+why)
				if slices.Contains(loaders, in) {
					p.addLoader(r)
				}
			}
		}
	}
	for _, x := range execgrant.Extras(execGrants(rc.Exec)) {
		if slices.ContainsFunc(writePaths, func(w string) bool {
			return x.Path == w || strings.HasPrefix(x.Path, strings.TrimSuffix(w, "/")+"/")
		}) {
			continue
		}
		add(x.Path, pick(x.IsDir, llExecDir, llExecFile), "allowed_exec_paths: "+x.Reason)
		grantInterps(pick(x.IsDir, elfInterpreters, x.Interps), pick(x.IsDir, elfInterpreters, []string{x.Loader}), x.Path)
	}
	execWrites := cfg.AllowExecWritePaths && len(rc.Write) > 0
	if execWrites {
		for _, rp := range rc.Write {
			add(rp.Resolved, ll.AccessFSExecute, "allow_exec_write_paths: programs built here may run")
		}
		grantInterps(elfInterpreters, elfInterpreters, "programs in the write paths")
	}
	if fi, err := os.Stat(sharedMemoryDir); err == nil && fi.IsDir() && cfg.AllowSharedMemory {
		add(sharedMemoryDir, llWriteDir, "allow_shared_memory: POSIX shared memory and semaphores")
	}

	for _, ep := range rc.Connect {
		if ep.AnyPort {
			// Landlock's connect rules name ports only: a host on any
			// port can be granted only by not handling connect at all.
			p.ConnectAnyPort = append(p.ConnectAnyPort, ep.String())
			continue
		}
		if !slices.Contains(p.Connect, ep.Port) {
			p.Connect = append(p.Connect, ep.Port)
		}
	}
	if len(p.ConnectAnyPort) > 0 {
		// No connect rule then: the kernel refuses a rule for an access
		// the ruleset does not handle. WrapCommand's egress namespace
		// handles connect again (egressPlan.restrictConnect).
		p.HandledNet &^= ll.AccessNetConnectTCP
		p.Connect = nil
	}
	p.Bind = slices.Clone(rc.Bind)

	p.Seccomp = seccomp.Policy{
		AllowSpawn:       cfg.AllowProcessSpawn,
		AllowExec:        len(execPaths) > 0 || execWrites,
		AllowUnixSockets: cfg.AllowUnixSockets,
		AllowTCP:         len(rc.Connect) > 0 || len(rc.Bind) > 0,
		AllowUDP:         cfg.AllowUDP,
		DenyChownXattr:   !cfg.AllowChown,
		AllowSysVIPC:     cfg.AllowSysVIPC,
		// DenyPathMetadata is ApplySelf's: it breaks chmod(2) for every
		// program, a price only a process that confines itself chooses
		// (see forSelf).
	}
	// Under WrapCommand and Run (exec names the target) with neither spawn
	// nor exec paths, the target is the only program its process can ever
	// run: the filter's exec nonce refuses every later execve (see
	// wrap_linux.go). Otherwise whatever the filter lets through, Landlock
	// decides.
	if len(exec) > 0 {
		p.ExecAfterStart = cfg.AllowProcessSpawn || len(rc.Exec) > 0
	} else {
		p.ExecAfterStart = p.Seccomp.AllowExec
	}
	return p
}

// forSelf returns p as ApplySelf applies it: chmod, utimes and the other
// metadata calls by path refused too (Policy.DenyPathMetadata). A process
// that confines itself cannot use the mount-namespace layer (it is
// multi-threaded), so seccomp is the only way to keep these calls off the
// files outside its grants. WrapCommand and Run leave them to that layer
// and, where it is missing, report them (see linuxPlan).
func (p linuxPolicy) forSelf() linuxPolicy {
	p.Seccomp.DenyPathMetadata = true
	return p
}

// statSystemPaths adds the rules for SystemPaths, to be made in this
// process, through add, with /proc/self as procSelf. One stat per path
// tells whether it exists, whether it is a directory, and whether it is a
// file already listed under another name (/lib and /usr/lib on a
// merged-/usr system).
func (p *linuxPolicy) statSystemPaths(procSelf string, add func(string, landlock.AccessFSSet, string)) {
	var seen []os.FileInfo // of p.Paths[i], i < len(seen)
	for _, sp := range SystemPaths {
		path := sp.Path
		if path == "/proc/self" {
			path = procSelf
		}
		fi, err := os.Stat(path)
		if err != nil {
			p.Skipped = append(p.Skipped, sp.Path)
			continue
		}
		access := llRead
		switch {
		case fi.IsDir():
			access = llReadDir
		case sp.Write:
			access = llDevice
		}
		if i := slices.IndexFunc(seen, func(o os.FileInfo) bool { return os.SameFile(o, fi) }); i >= 0 {
			path = p.Paths[i].Path
		}
		add(path, access, "default: "+sp.Reason)
		if len(p.Paths) > len(seen) {
			seen = append(seen, fi)
		}
	}
}

func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// addLoader records a dynamic loader given execute (see linuxPolicy.Loaders).
func (p *linuxPolicy) addLoader(path string) {
	if path != "" && !slices.Contains(p.Loaders, path) {
		p.Loaders = append(p.Loaders, path)
	}
}

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

	f := func(feature string, enforced bool, detail, hint string) {
		if !plan.Available {
			enforced, hint = false, ""
			detail = "sandbox unavailable: " + plan.Reason
		}
		plan.Features = append(plan.Features, spec.Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
	upgrade := "upgrade the kernel"

	f(spec.FeatureFilesystem, true, "Landlock: read, write and execute only on granted paths", "")
	if p.ABI >= 3 {
		f(spec.FeatureTruncate, true, "Landlock: truncate only inside write paths", "")
	} else {
		f(spec.FeatureTruncate, false, "truncate(2) of files outside write paths is not restricted: "+needABI(3), upgrade)
	}
	if p.ABI >= 5 {
		f(spec.FeatureIoctlDev, true, "Landlock: ioctl only on granted devices", "")
	} else {
		f(spec.FeatureIoctlDev, false, "ioctl on device files opened under granted paths is not restricted: "+needABI(5), upgrade)
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
		f(spec.FeatureTCPConnect, false, "TCP ports are not restricted: "+needABI(4)+"; any host and port is reachable", upgrade)
		f(spec.FeatureTCPBind, false, "TCP bind is not restricted: "+needABI(4), upgrade)
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
		f(spec.FeatureUnixSockets, false, "connect to any pathname unix socket (e.g. /var/run/docker.sock) is not restricted: "+needABI(9), upgrade)
	}
	switch {
	case p.ABI >= 6:
		f(spec.FeatureScopeUnix, true, "Landlock: abstract unix sockets scoped to the sandbox", "")
	case !cfg.AllowUnixSockets:
		f(spec.FeatureScopeUnix, true, "seccomp: AF_UNIX sockets denied", "")
	default:
		f(spec.FeatureScopeUnix, false, "abstract unix sockets outside the sandbox are reachable: "+needABI(6), upgrade)
	}
	if p.ABI >= 6 {
		f(spec.FeatureScopeSignal, true, "Landlock: signals only to processes in the sandbox", "")
	} else {
		f(spec.FeatureScopeSignal, false, "signals to other processes of the same user are not restricted: "+needABI(6), upgrade)
	}
	f(spec.FeatureSpawn, true, pick(cfg.AllowProcessSpawn, "granted: children inherit the sandbox",
		"seccomp: fork, vfork and clone of a process denied"), "")
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
	plan.Features = append(plan.Features, slices.DeleteFunc(spec.LayerFeatures(rc, "linux", true), func(e spec.Enforcement) bool {
		return e.Feature == spec.FeatureDenyWrite || e.Feature == spec.FeatureDenyRead || e.Feature == spec.FeatureMounts
	})...)
	plan.Features = append(plan.Features, mountLayerFeatures(rc, p.Layer, plan.Available)...)
	if plan.Available {
		// Without limits there is nothing to report: neither the cgroups
		// nor the credentials (the caller's hard limits) are looked at.
		if !rc.Config.Limits.IsZero() {
			// The credentials ApplySelf's rlimits will live with: today
			// the caller's own. An ApplySelf that drops capabilities
			// before the target code runs must pass them as they will
			// be after the drop.
			cg := rc.Cgroup
			if cg == nil {
				a, _ := commandCgroup(rc.Config.Limits)
				cg = &a
			}
			plan.Features = append(plan.Features, linuxLimitFeatures(rc, currentCreds(), *cg)...)
		}
	} else {
		plan.Features = append(plan.Features, spec.UnenforcedLimits(rc, "sandbox unavailable: "+plan.Reason)...)
	}
	return plan
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
		plan.Paths = append(plan.Paths, spec.PathRule{Path: r.Path, Access: r.Access.String(), Source: r.Source})
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
