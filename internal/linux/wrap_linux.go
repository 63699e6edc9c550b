//go:build linux

package linux

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/cgroup"
	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spawnhelper"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// The Linux WrapCommand: a re-exec trampoline. See internal/trampoline for
// the child's side; this file is the parent's.

func init() {
	// internal/trampoline's init takes over every process that carries its
	// environment marker, long before this runs. A process that has the
	// trampoline's argv[0] but got here lost that environment (cmd.Env was
	// replaced after WrapCommand): running the host program's main in it
	// would run the host, unconfined, in place of the target.
	if len(os.Args) > 0 && os.Args[0] == trampoline.Arg0 {
		os.Stderr.WriteString("sandbox: started as a sandbox trampoline without its environment " +
			"(was cmd.Env replaced after WrapCommand?): refusing to run the host program\n")
		os.Exit(trampoline.ExitSetup)
	}
}

// selfExe is what the trampoline re-executes: the kernel's link to this
// process's executable, valid even if the file was replaced or deleted
// since the process started.
const selfExe = "/proc/self/exe"

// wrapOptions are the parts of a wrap only Run uses.
type wrapOptions struct {
	// failurePipe, when set, is the write end of a pipe appended to
	// cmd.ExtraFiles, on which the trampoline reports why it could not
	// start the target (it is close-on-exec in the child).
	failurePipe *os.File
	// denySetsid makes the seccomp filter refuse setsid(2), so that every
	// process of the tree stays in the session Run kills.
	denySetsid bool
	// denyPdeathsigChange makes the filter refuse PR_SET_PDEATHSIG with
	// anything but SIGKILL, so that the target keeps the parent-death
	// signal Run gives it.
	denyPdeathsigChange bool
	// killGroup asks for a cgroup for the tree even without limits, for a
	// race-free kill (Run, with AllowProcessSpawn), where one that can
	// freeze or kill the tree whole can be made; without one the caller
	// falls back to its own kill.
	killGroup bool
	// group, when set, receives the tree's cgroup and limits (nil when
	// neither was asked for), which the caller must close.
	group **treeGroup
	// pidNS, when set (Run), asks for a PID namespace of the tree's own
	// where the tree needs a kill (AllowProcessSpawn) and namespaces are
	// available, and receives whether the child starts in one: as its
	// PID 1, so that the kernel kills every process of the namespace when
	// the program dies, also when the caller is killed (see Run's doc).
	pidNS *bool
	// git, when set, receives what the git checks after the command need
	// (see gitEnd): Run makes them once the tree is gone, FinishCommand
	// for WrapCommand's callers.
	git *gitEnd
}

// WrapCommand prepares cmd so that cmd.Start runs its program confined to
// cfg, which it resolves with spec.Resolve after the checks of cmd itself
// (sandbox.WrapCommand on Linux, whose doc comment, on the root's
// Sandbox interface, is the contract: exit codes 125/126/127, what may
// change after the call, FinishCommand). It returns what it set up beside
// the process (the tree's cgroup, the egress proxy, the git checks) as a
// [Command], which the caller ends once the command's tree is gone.
func WrapCommand(cmd *exec.Cmd, cfg spec.Config) (*Command, error) {
	var t *treeGroup
	var git gitEnd
	g, err := wrapLinux(cmd, cfg, wrapOptions{group: &t, git: &git})
	if err != nil {
		return nil, err
	}
	return newCommand(t, g, git), nil
}

func wrapLinux(cmd *exec.Cmd, cfg spec.Config, opts wrapOptions) (g *EgressProc, err error) {
	if cmd == nil {
		return nil, errors.New("sandbox: WrapCommand: nil *exec.Cmd")
	}
	if cmd.Process != nil {
		return nil, errors.New("sandbox: WrapCommand: command already started")
	}
	defer func() {
		if err != nil {
			// Fail closed: a Start after an ignored error must not run
			// the program unconfined.
			cmd.Err = err
		}
	}()
	if len(cmd.Args) > 0 && cmd.Args[0] == trampoline.Arg0 {
		return nil, errors.New("sandbox: WrapCommand: command already wrapped")
	}
	if cmd.Err != nil {
		return nil, fmt.Errorf("sandbox: WrapCommand: %w", cmd.Err)
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Chroot != "" {
		return nil, errors.New("sandbox: WrapCommand: SysProcAttr.Chroot is not supported")
	}
	rc, err := spec.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Strict {
		strictStdio(cmd)
	}
	target, resolved, err := wrapTarget(cmd)
	if err != nil {
		return nil, err
	}
	env, err := targetEnv(cmd)
	if err != nil {
		return nil, err
	}

	// The tree's cgroup: found before the plan is checked, so that the
	// plan (and Strict) judge the limits by what this spawn will get.
	var cgm *cgroup.Manager
	var avail spec.Cgroup
	if needsCgroup(cfg.Limits) || opts.killGroup && cfg.AllowProcessSpawn {
		var derr error
		cgm, derr = detectCgroup()
		if needsCgroup(cfg.Limits) {
			avail = availOf(cgm, derr)
		}
	}
	rc.Cgroup = &avail

	k := kernel()
	pol := buildLinuxPolicy(rc, k.abi, inChild, []string{resolved})
	cwd := cmd.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	} else if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	eplan := egressPlanFor(rc)
	if err := eplan.loopBindError(); err != nil {
		return nil, err
	}
	var resolvDir string
	if len(eplan.transparent) > 0 {
		// The program's resolver asks the caller's, on a loopback
		// address (egress_transparent_linux.go); removed at the
		// egress's close, or below if WrapCommand fails.
		if resolvDir, err = withResolvConf(rc); err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: %w", err)
		}
		defer func() {
			if err != nil {
				os.RemoveAll(resolvDir)
			}
		}()
	}
	pol.Layer = newMountLayer(rc, []string{resolved}, cwd)
	if cfg.AllowSysVIPC {
		// System V IPC allowed: in a private IPC namespace, the
		// namespaces' (nsAttr), where they can be made; no mounts.
		ns := namespaces()
		pol.IPCNamespace = &ns
	}
	plan := linuxPlan(rc, pol, k.seccomp, k.abiReason)
	eplan.addTo(&plan)
	if err := spec.CheckApplicable(plan, cfg.Strict, spec.ScopeCommand); err != nil {
		return nil, err
	}
	if eplan.on {
		// Inside its namespace the program can reach nothing but the
		// proxy and the transparent path's listeners (lo only, every
		// route local): Landlock says so too.
		eplan.restrictConnect(&pol)
		env = proxyEnv(env, eplan)
	}
	// Run's tree (with spawn): a PID namespace, whose PID 1 the program
	// is, where namespaces are available. When the program dies, however
	// it dies, the kernel kills every other process of the namespace
	// before its parent can reap it, and nothing can leave the namespace
	// (seccomp refuses setns and unshare); the program has Pdeathsig
	// SIGKILL, so the tree also dies with a caller that is killed, at once
	// (a cgroup's reaper needs the time to start a process and kill).
	// Where namespaces are unavailable, Run kills through the tree's
	// cgroup if one can stop the tree whole, else by its session scan
	// (killSession); a killed caller's tree then lives on unless it has a
	// cgroup, which the caller's reaper kills and removes.
	pidNS := opts.pidNS != nil && cfg.AllowProcessSpawn && namespaces().ok
	ipcNS := pol.IPCNamespace != nil && pol.IPCNamespace.ok
	var attr *syscall.SysProcAttr
	if pol.Layer.used() || eplan.on || pidNS || ipcNS {
		// With egress, a network namespace too, whether or not the
		// mount layer has anything to do. Every such start has a
		// private IPC namespace (nsAttr): for AllowSysVIPC that is
		// all it needs.
		if attr, err = nsAttr(cmd.SysProcAttr, eplan.on, pidNS); err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: %w", err)
		}
	}
	sp := pol.Seccomp
	sp.DenySetsid = opts.denySetsid
	sp.DenyPdeathsigChange = opts.denyPdeathsigChange
	// Without spawning and without an exec allowlist the target is the
	// only program its process may ever run (see seccomp's exec_nonce.go).
	sp.ExecNonce = !cfg.AllowProcessSpawn && len(rc.Exec) == 0
	filter, err := trampolineFilter(sp)
	if err != nil {
		return nil, err
	}
	helper, _ := childHalf()
	if helper == nil {
		if _, err := os.Stat(selfExe); err != nil {
			return nil, fmt.Errorf("%w: WrapCommand re-executes %s: %w", spec.ErrUnavailable, selfExe, err)
		}
	}

	p := &trampoline.Payload{
		Path:       target,
		Env:        env,
		FirstFD:    3 + len(cmd.ExtraFiles),
		ErrFD:      -1,
		HandledFS:  uint64(pol.HandledFS),
		HandledNet: uint64(pol.HandledNet),
		Scoped:     uint64(pol.Scoped),
		Rules:      make([]trampoline.PathRule, 0, len(pol.System)+len(pol.Paths)),
	}
	for _, r := range pol.System {
		p.Rules = append(p.Rules, trampoline.PathRule{Path: r.Path, Dir: uint64(r.Dir), File: uint64(r.File)})
	}
	if testHookBeforeRuleIDs != nil {
		testHookBeforeRuleIDs()
	}
	for _, r := range pol.Paths {
		// The child checks that it opens the object resolved here: a
		// path replaced since (by a symlink to a secret, say) grants
		// nothing. A path gone already grants nothing either.
		//
		// Not for /dev/shm under the mount layer (allow_shared_memory):
		// the child opens the private tmpfs the layer mounted there,
		// not what is here. Every other rule path was resolved
		// (symlinks and all) when the policy was built, so a symlink
		// here now was swapped in since: lstat, not stat, which would
		// record the object the substitute names and let the child
		// grant it. The same one system call.
		rule := trampoline.PathRule{Path: r.Path}
		if attr == nil || !slices.Contains(pol.Layer.plan.Tmp, r.Path) {
			var st unix.Stat_t
			if err := unix.Lstat(r.Path, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
				continue
			}
			rule.Dev, rule.Ino = st.Dev, st.Ino
		}
		// Directory rights always include READ_DIR, file rights never.
		if r.Access&ll.AccessFSReadDir != 0 {
			rule.Dir = uint64(r.Access)
		} else {
			rule.File = uint64(r.Access)
		}
		p.Rules = append(p.Rules, rule)
	}
	if pol.HandledNet != 0 {
		for _, port := range pol.Connect {
			p.Ports = append(p.Ports, trampoline.PortRule{Port: uint64(port), Access: ll.AccessNetConnectTCP})
		}
		for _, port := range pol.Bind {
			p.Ports = append(p.Ports, trampoline.PortRule{Port: uint64(port), Access: ll.AccessNetBindTCP})
		}
	}
	p.Filters = [][]trampoline.SockFilter{filter.prog}
	if sp.AllowExec && sp.ExecNonce {
		prog, nonce, err := filter.withNonce()
		if err != nil {
			return nil, err
		}
		p.Filters[0], p.ExecNonce = prog, nonce
	}
	if attr != nil {
		if err := withNamespaceStep(p, rc, pol); err != nil {
			return nil, err
		}
	}
	extra := slices.Clone(cmd.ExtraFiles)
	if opts.failurePipe != nil {
		p.ErrFD = p.FirstFD
		extra = append(extra, opts.failurePipe)
	}
	if eplan.on {
		if g, err = startEgress(eplan); err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: egress proxy: %w", err)
		}
		g.resolvDir = resolvDir
		defer func() {
			if err != nil {
				g.Close()
				g = nil
			}
		}()
		// The child's end of the handoff channel: above the failure
		// pipe, so marked close-on-exec with it; the child closes it
		// itself once it has sent the listener.
		extra = append(extra, g.childEnd)
		p.Net = trampoline.NetStep{FD: 3 + len(extra) - 1, Port: eplan.port, Transparent: eplan.transparent, Pool: uint32(eplan.poolSize())}
	}
	if !cfg.Limits.IsZero() {
		// The caller's hard limits are read only when there is a limit
		// to clamp: not on every spawn.
		p.Rlimits = commandRlimits(cfg.Limits, avail, rlimitCeilings())
	}

	// Last, as nothing can fail after it: the tree's cgroup, with its
	// limits written, whose cgroup.procs descriptors the child half
	// writes "0" to before anything else (failing closed).
	var tg *treeGroup
	if cgroupLimits(cfg.Limits, avail) != (cgroup.Limits{}) {
		t, err := newTreeGroup(cgm, cfg.Limits, avail)
		if err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: cannot make the tree's cgroup for Limits: %w", err)
		}
		tg = t
	} else if opts.killGroup && cfg.AllowProcessSpawn && cgm != nil && cgm.KillsRaceFree() {
		// Only for the kill: without it Run falls back to its own.
		tg, _ = newTreeGroup(cgm, spec.Limits{}, avail)
	}
	if tg != nil {
		for _, f := range tg.g.ProcsFiles() {
			p.CgroupFDs = append(p.CgroupFDs, 3+len(extra))
			extra = append(extra, f)
		}
	} else if !cfg.Limits.IsZero() {
		tg = &treeGroup{limits: cfg.Limits}
	}
	if opts.group != nil {
		*opts.group = tg
	}
	if opts.pidNS != nil {
		*opts.pidNS = pidNS
	}
	if opts.git != nil {
		if pol.Layer.used() {
			opts.git.commonDirs = pol.Layer.missingCommonDirs()
			opts.git.repos = pol.Layer.git
			opts.git.protected = pol.Layer.gitDirs
		}
		opts.git.spots = pol.Layer.gitSpots
		opts.git.depth = pol.Layer.gitDepth()
		opts.git.pin() // before the program can change what the paths name
	}

	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{cmd.Path}
	}
	if helper != nil {
		// The helper is the last inherited descriptor, above the
		// failure pipe; exec.Cmd puts it at exactly that number in the
		// child, which executes it through /proc/self/fd. The helper
		// marks it close-on-exec with everything from FirstFD up.
		extra = append(extra, helper)
		cmd.Path = spawnhelper.Path(3 + len(extra) - 1)
	} else {
		cmd.Path = selfExe
	}
	cmd.Args = append([]string{trampoline.Arg0}, argv...)
	cmd.Env = p.Environ()
	cmd.ExtraFiles = extra
	if attr != nil {
		cmd.SysProcAttr = attr
	}
	return g, nil
}

// withNamespaceStep adds the mount layer's step to p, and the Landlock
// rules of the Mounts' targets: each opens, in the child after the
// mounts, the source shown there (checked by the source's device and
// inode), with read rights, or read-write ones for a writable mount.
func withNamespaceStep(p *trampoline.Payload, rc *spec.Resolved, pol linuxPolicy) error {
	var ns unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &ns); err != nil {
		return fmt.Errorf("%w: WrapCommand: /proc/self/ns/mnt: %w", spec.ErrUnavailable, err)
	}
	p.Flags |= trampoline.FlagNamespaces
	p.Net = trampoline.NetStep{FD: -1}
	p.ParentMountNS = [2]uint64{ns.Dev, ns.Ino}
	if !pol.Layer.used() {
		// Only the egress layer, Run's PID namespace or AllowSysVIPC's
		// private IPC namespace needs the namespaces: no mounts.
		return nil
	}
	p.Mounts = pol.Layer.plan.MountOps()
	for _, m := range p.Mounts {
		if m.Slot >= trampoline.MaxMountSlots {
			// Both child halves refuse such a payload; say why here.
			return fmt.Errorf("sandbox: WrapCommand: the mount layer's plan needs more than %d mount clones (too many write, deny and mount paths)", trampoline.MaxMountSlots)
		}
	}
	unixRight := landlock.AccessFSSet(0)
	if rc.Config.AllowUnixSockets {
		unixRight = ll.AccessFSResolveUnix
	}
	// The private /tmp and /dev/shm are the sandbox's own: granted
	// read-write (they are noexec). Programs that write to /tmp whatever
	// TMPDIR says, and POSIX shared memory and semaphores, work, and
	// nothing of the host's is there.
	for _, d := range pol.Layer.plan.Tmp {
		p.Rules = append(p.Rules, trampoline.PathRule{Path: d, Dir: uint64((llWriteDir | unixRight) & pol.HandledFS)})
	}
	for _, m := range rc.Mounts {
		// m.Path is resolved: lstat, as for the rules above.
		var st unix.Stat_t
		if err := unix.Lstat(m.Path, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			continue // gone (reported by the plan as a gap) or swapped
		}
		rule := trampoline.PathRule{Path: m.At, Dev: st.Dev, Ino: st.Ino}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			rule.Dir = uint64(pick(m.Write, llWriteDir|unixRight, llReadDir) & pol.HandledFS)
		} else {
			rule.File = uint64(pick(m.Write, llWriteFile, llRead) & pol.HandledFS)
		}
		p.Rules = append(p.Rules, rule)
	}
	return nil
}

// filterCache maps a seccomp.Policy to its *cachedFilter. The program
// depends on nothing but the policy and the architecture, and assembling it
// costs about as much as the rest of WrapCommand.
var filterCache sync.Map

// cachedFilter is a program, never modified once stored, and where the
// exec nonce goes into a copy of it (Policy.ExecNonce).
type cachedFilter struct {
	prog  []trampoline.SockFilter
	slots [4][]int
}

func trampolineFilter(p seccomp.Policy) (*cachedFilter, error) {
	if v, ok := filterCache.Load(p); ok {
		return v.(*cachedFilter), nil
	}
	f, err := seccomp.Build(p)
	if err != nil {
		return nil, fmt.Errorf("%w: building seccomp filter: %w", spec.ErrUnavailable, err)
	}
	c := &cachedFilter{prog: make([]trampoline.SockFilter, len(f.Program))}
	for i, ins := range f.Program {
		c.prog[i] = trampoline.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	if p.AllowExec && p.ExecNonce {
		if c.slots, err = seccomp.ExecNonceSlots(f.Program); err != nil {
			return nil, fmt.Errorf("%w: building seccomp filter: %w", spec.ErrUnavailable, err)
		}
	}
	filterCache.Store(p, c)
	return c, nil
}

// withNonce returns a copy of the program with a fresh random exec nonce in
// it, and the nonce. The words are written the way seccomp.PatchExecNonce
// writes them (TestWrapExecNoncePatch compares the two).
func (c *cachedFilter) withNonce() ([]trampoline.SockFilter, [2]uint64, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, [2]uint64{}, fmt.Errorf("sandbox: WrapCommand: exec nonce: %w", err)
	}
	nonce := [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	words := [4]uint32{uint32(nonce[0]), uint32(nonce[0] >> 32), uint32(nonce[1]), uint32(nonce[1] >> 32)}
	prog := slices.Clone(c.prog)
	for w, s := range c.slots {
		for _, i := range s {
			prog[i].K = words[w]
		}
	}
	return prog, nonce, nil
}

// testHookBeforeRuleIDs, when set (tests), runs in WrapCommand after the
// policy's paths are resolved and before their devices and inodes are
// recorded: the window TestWrapRuleSwappedBeforeRecord swaps a rule path in.
var testHookBeforeRuleIDs func()

// forceGoTrampoline makes WrapCommand use the Go trampoline even where the
// helper works (tests run the WrapCommand tests through both).
var forceGoTrampoline bool

// childHalf returns the helper's sealed memfd, or nil and why the Go
// trampoline is the child half in this process.
func childHalf() (*os.File, string) {
	if forceGoTrampoline {
		return nil, "the Go trampoline is forced (tests)"
	}
	return spawnhelper.Executable()
}

// childHalfLine says, for the plan, which child half WrapCommand and Run use.
func childHalfLine() string {
	if f, why := childHalf(); f == nil {
		return "WrapCommand/Run child half: the Go trampoline (a re-exec of this program), because " + why
	}
	return "WrapCommand/Run child half: the static helper (internal/spawnhelper), from a sealed memfd"
}

// wrapTarget returns the program cmd would execute, as an absolute path
// (relative paths are relative to cmd.Dir, as os/exec has it) and with
// symlinks resolved, after checking that it is an executable regular file.
func wrapTarget(cmd *exec.Cmd) (abs, resolved string, err error) {
	bad := func(err error) (string, string, error) {
		return "", "", fmt.Errorf("sandbox: WrapCommand: target: %w", err)
	}
	path := cmd.Path
	if path == "" {
		return bad(errors.New("no command"))
	}
	if !filepath.IsAbs(path) {
		dir, err := filepath.Abs(cmd.Dir)
		if err != nil {
			return bad(err)
		}
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	resolved, fi, err := execgrant.ResolveFile(path)
	if err != nil {
		return bad(err)
	}
	switch {
	case fi.IsDir():
		return bad(&fs.PathError{Op: "exec", Path: path, Err: syscall.EISDIR})
	case !fi.Mode().IsRegular():
		return bad(&fs.PathError{Op: "exec", Path: path, Err: syscall.EACCES})
	}
	if err := unix.Access(path, unix.X_OK); err != nil {
		return bad(&fs.PathError{Op: "exec", Path: path, Err: err})
	}
	return path, resolved, nil
}

// targetEnv is the environment cmd would give its program, less the child
// half's reserved variables (trampoline.Reserved).
func targetEnv(cmd *exec.Cmd) ([]string, error) {
	// Environ drops entries with a NUL, which Start would refuse.
	for _, kv := range cmd.Env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: WrapCommand: environment entry %q contains NUL", kv)
		}
	}
	return slices.DeleteFunc(cmd.Environ(), trampoline.Reserved), nil
}
