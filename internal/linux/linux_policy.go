package linux

// The Linux policy as data: which Landlock rules and which seccomp filter a
// Config becomes on a kernel with a given Landlock ABI. Nothing here calls
// into the kernel, so it compiles and is tested on every OS; apply_linux.go
// applies the result.

import (
	"os"
	"slices"

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

// another process, which looks at the paths itself.
const inChild = ""

// linuxRule is one Landlock path rule.
type linuxRule struct {
	Path   string
	Access landlock.AccessFSSet
	// why, then also (in the order they were added), are the reasons the
	// rule is there, which Source joins: only PlanFor and the CLI's plan
	// read them, so a WrapCommand builds no text for an exec directory's
	// hundreds of rules.
	why  ruleSource
	also []ruleSource
	// id, when judged, is the identity of the object at Path that this
	// build judged before granting it (an exec directory's symlink
	// target: execgrant.Extra's Dev and Ino), which ruleIDs records
	// instead of looking again. Only while the rule has that one source:
	// a rule another source adds to (add) is looked at by ruleIDs.
	id     RuleID
	judged bool
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
	cfg := rc.Config
	p := handledFor(abi, cfg)
	p.addSystemPaths(procSelf)
	p.addReadWrite(rc)
	execPaths := slices.Clone(rc.Exec)
	for _, e := range exec {
		execPaths = append(execPaths, spec.Path{Given: e, Resolved: e})
	}
	writePaths := make([]string, len(rc.Write))
	for i, w := range rc.Write {
		writePaths[i] = w.Resolved
	}
	// Each interpreter is checked against writePaths once in this build
	// (the exec directories' loaders, their targets' interpreters).
	seen := grantableMemo{}
	p.addExecPaths(execPaths, writePaths, seen)
	p.addExecExtras(rc, writePaths, seen)
	execWrites := cfg.AllowExecWritePaths && len(rc.Write) > 0
	if execWrites {
		for _, rp := range rc.Write {
			p.add(rp.Resolved, ll.AccessFSExecute, "allow_exec_write_paths: programs built here may run")
		}
		p.batch().grantInterps(elfInterpreters, elfInterpreters, writePaths, "programs in the write paths", nil)
	}
	if fi, err := os.Stat(sharedMemoryDir); err == nil && fi.IsDir() && cfg.AllowSharedMemory {
		p.add(sharedMemoryDir, llWriteDir, "allow_shared_memory: POSIX shared memory and semaphores")
	}
	p.addNetwork(rc)

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

// handledFor is an empty policy for ABI abi: the access rights Landlock
// handles there, for cfg.
func handledFor(abi int, cfg spec.Config) linuxPolicy {
	abiCfg := landlockABIConfig(abi)
	p := linuxPolicy{ABI: abi, HandledFS: abiCfg.HandledAccessFS}
	if abi >= 4 {
		p.HandledNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if abi >= 10 && !cfg.AllowUDP {
		// Defence in depth: seccomp already refuses UDP sockets.
		p.HandledNet |= ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
	}
	p.Scoped = abiCfg.Scoped
	return p
}

// add grants access (as far as the ruleset handles it) on path, merged into
// path's rule when there is one already.
func (p *linuxPolicy) add(path string, access landlock.AccessFSSet, source string) {
	p.addFrom(path, access, ruleSource{what: source})
}

// addFrom is add with the source as a ruleSource.
func (p *linuxPolicy) addFrom(path string, access landlock.AccessFSSet, why ruleSource) {
	access &= p.HandledFS
	if access == 0 {
		return
	}
	for i := range p.Paths {
		if p.Paths[i].Path == path {
			p.Paths[i].merge(access, why)
			return
		}
	}
	p.Paths = append(p.Paths, linuxRule{Path: path, Access: access, why: why})
}

// addRule adds r, a rule built for this policy elsewhere, as add would
// have: merged, with every source of r in order, into the rule of its path
// when there is one (whose judged identity then no longer holds alone);
// else appended as it is, its judged identity kept.
func (p *linuxPolicy) addRule(r linuxRule) {
	r.Access &= p.HandledFS
	if r.Access == 0 {
		return
	}
	for i := range p.Paths {
		if p.Paths[i].Path == r.Path {
			p.Paths[i].merge(r.Access, r.why)
			p.Paths[i].also = append(p.Paths[i].also, r.also...)
			return
		}
	}
	// r's sources may share their array with the policy r came from: a
	// later merge here must not write into it.
	r.also = slices.Clip(r.also)
	p.Paths = append(p.Paths, r)
}

// addSystemPaths adds the rules of SystemPaths: as System rules with
// inChild, else looked at here (statSystemPaths).
func (p *linuxPolicy) addSystemPaths(procSelf string) {
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
		p.statSystemPaths(procSelf, p.add, osLook{})
	}
}

// addReadWrite adds the rules of rc's read and write paths.
func (p *linuxPolicy) addReadWrite(rc *spec.Resolved) {
	unixRight := landlock.AccessFSSet(0)
	if rc.Config.AllowUnixSockets {
		unixRight = ll.AccessFSResolveUnix
	}
	for _, rp := range rc.Read {
		p.add(rp.Resolved, pick(rp.IsDir, llReadDir, llRead), "allowed_read_paths")
	}
	for _, rp := range rc.Write {
		p.add(rp.Resolved, pick(rp.IsDir, llWriteDir|unixRight, llWriteFile), "allowed_write_paths")
	}
}

// addExecPaths adds the rules of execPaths and of their interpreters (none
// inside writePaths), the answers of execgrant.Grantable kept in seen.
func (p *linuxPolicy) addExecPaths(execPaths []spec.Path, writePaths []string, seen grantableMemo) {
	for _, rp := range execPaths {
		p.add(rp.Resolved, pick(rp.IsDir, llExecDir, llExecFile), "allowed_exec_paths")
		var interps []string
		if rp.IsDir {
			for _, in := range elfInterpreters {
				if r, ok := seen.grantable(in, writePaths); ok {
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
			p.addFrom(in, llExecFile, ruleSource{"interpreter of ", rp.Resolved})
		}
	}
}

// addNetwork sets the TCP ports of rc's connect and bind entries.
func (p *linuxPolicy) addNetwork(rc *spec.Resolved) {
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

// systemLook is how statSystemPaths looks at a path: os.Stat and
// os.SameFile (osLook), or ApplySelf's openedPaths, which keeps the
// descriptor it looked through for the path's rule (apply_paths_linux.go).
type systemLook interface {
	Stat(path string) (os.FileInfo, error)
	SameFile(a, b os.FileInfo) bool
}

type osLook struct{}

func (osLook) Stat(path string) (os.FileInfo, error) { return os.Stat(path) }
func (osLook) SameFile(a, b os.FileInfo) bool        { return os.SameFile(a, b) }

// statSystemPaths adds the rules for SystemPaths, to be made in this
// process, through add, with /proc/self as procSelf. One stat per path
// (through look) tells whether it exists, whether it is a directory, and
// whether it is a file already listed under another name (/lib and
// /usr/lib on a merged-/usr system).
func (p *linuxPolicy) statSystemPaths(procSelf string, add func(string, landlock.AccessFSSet, string), look systemLook) {
	var seen []os.FileInfo // of p.Paths[i], i < len(seen)
	for _, sp := range SystemPaths {
		path := sp.Path
		if path == "/proc/self" {
			path = procSelf
		}
		fi, err := look.Stat(path)
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
		if i := slices.IndexFunc(seen, func(o os.FileInfo) bool { return look.SameFile(o, fi) }); i >= 0 {
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
