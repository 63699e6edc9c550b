package linux

// The apply halves around PlanSpawn: gather gathers the host's facts a
// spawn's plan needs (Host), apply wires the *exec.Cmd as the plan says,
// starting the egress proxy and making the tree's cgroup.

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/cgroup"
	"github.com/openparallax/sandbox/internal/spawnhelper"
	"github.com/openparallax/sandbox/internal/spec"
)

// wrapHost is what the apply half keeps of a wrap between gather and
// apply.
type wrapHost struct {
	cgm       *cgroup.Manager
	avail     spec.Cgroup
	eplan     egressPlan
	resolvDir string // the transparent path's resolv.conf, "" when none
	helper    *os.File
	// group: the tree's cgroup is made for the Limits (groupLimits), for
	// Run's kill only (groupKill), or not at all ("").
	group string
	// killGroup: the tree needs a cgroup for Run's kill (see
	// wrapOptions.killGroup), which no PID namespace gives it.
	killGroup bool
}

// pidNamespaceKills reports whether the spawn's tree will be a PID
// namespace of its own (as PlanSpawn decides Spawn.PIDNamespace: Run, with
// spawn, where namespaces are available). Its PID 1 is the program: when
// it dies, or Run kills it, the kernel kills every other process of the
// namespace before Run can reap it, and nothing leaves the namespace, so
// the whole tree is stopped without a race and no cgroup is needed for
// the kill (a cgroup for the Limits is another matter). The namespace
// probe runs once per process.
func pidNamespaceKills(rc *spec.Resolved, target Target) bool {
	return target.PIDNamespace && rc.Config.AllowProcessSpawn && namespaces().ok
}

const (
	groupLimits = "limits"
	groupKill   = "kill"
)

// gather gathers the host's facts for PlanSpawn, in the order WrapCommand
// has always looked at them.
func (w *wrapHost) gather(cmd *exec.Cmd, rc *spec.Resolved, target Target, opts wrapOptions) (Host, error) {
	cfg := rc.Config
	w.killGroup = opts.killGroup && cfg.AllowProcessSpawn && !pidNamespaceKills(rc, target)
	// The tree's cgroup: found before the plan is checked, so that the
	// plan (and Strict) judge the limits by what this spawn will get.
	if needsCgroup(cfg.Limits) || w.killGroup {
		var derr error
		w.cgm, derr = detectCgroup()
		if needsCgroup(cfg.Limits) {
			w.avail = availOf(w.cgm, derr)
		}
	}
	rc.Cgroup = &w.avail

	k := kernel()
	h := Host{ABI: k.abi, ABIReason: k.abiReason, Seccomp: k.seccomp}
	h.Policy = buildLinuxPolicy(rc, k.abi, inChild, []string{target.Resolved})
	w.eplan = egressPlanFor(rc)
	if err := w.eplan.loopBindError(); err != nil {
		return Host{}, err
	}
	if len(w.eplan.transparent) > 0 {
		var err error
		if w.resolvDir, err = withResolvConf(rc); err != nil {
			return Host{}, fmt.Errorf("sandbox: WrapCommand: %w", err)
		}
	}
	h.Layer = newMountLayer(rc, []string{target.Resolved}, target.Dir,
		rootHost{pol: &h.Policy, given: []string{target.Path}, freshProc: pidNamespaceKills(rc, target)})
	if needNamespaceProbe(rc, target) {
		h.Namespaces = namespaces()
	}
	h.Egress = spawnEgress(w.eplan, h.Policy, target.Env)
	h.Rules = ruleIDs(h.Policy, rc)
	w.gatherProcess(cmd, &h)
	if !cfg.Limits.IsZero() {
		// The caller's credentials and hard limits are read only when
		// there is a limit to clamp: not on every spawn.
		h.Creds, h.RlimitCeilings = currentCreds(), rlimitCeilings()
	}
	h.CgroupProcs = w.planGroup(cfg, opts)
	return h, nil
}

// gatherProcess gathers the facts of this process: the child half, the
// caller's SysProcAttr, the mount namespace, and a fresh exec nonce.
func (w *wrapHost) gatherProcess(cmd *exec.Cmd, h *Host) {
	w.helper, _ = childHalf()
	h.Helper = w.helper != nil
	if w.helper == nil {
		if _, err := os.Stat(selfExe); err != nil {
			h.SelfExeErr = fmt.Errorf("%w: WrapCommand re-executes %s: %w", spec.ErrUnavailable, selfExe, err)
		}
	}
	_, h.AttrErr = nsAttr(cmd.SysProcAttr, false, false)
	var ns unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &ns); err != nil {
		h.ParentMountNSErr = err
	} else {
		h.ParentMountNS = [2]uint64{ns.Dev, ns.Ino}
	}
	h.Nonce, h.NonceErr = newNonce()
}

// ruleIDs lstats the policy's rule paths and the Mounts' sources, after
// testHookBeforeRuleIDs. Every path was resolved (symlinks and all) when
// the policy was built, so a symlink here now was swapped in since: lstat,
// not stat, which would record the object the substitute names.
//
// A rule this build judged by its identity (linuxRule.judged: an exec
// directory's symlink target, ~130 of /usr/bin's) is not looked at again:
// it gets the identity it was judged by (execgrant.Extra's Dev and Ino),
// taken in this WrapCommand call, by the scan's own walk or by the cached
// scan's validation, which lstats the target and every directory the walk
// to it reads and finds them all as the scan saw them. Why that is sound,
// though taken earlier than the lstat here:
//
//   - what the identity is for: the child opens the path and makes the
//     rule only if it opens the object recorded (trampoline.PathRule), so
//     that the rule grants the object WrapCommand decided on, or nothing;
//   - the decision on a target rests on that very object (its type and
//     execute bits, its interpreters from its content), whose version
//     the identity comes with: recorded from it, the rule grants exactly
//     the object judged. An lstat here would record whatever the path
//     names by now: the same object when nothing changed (the usual case:
//     the same rules), but a newcomer nothing judged when the target was
//     replaced in between, which the child would then grant;
//   - a symlink swapped in after the judgement opens another object, so
//     the child grants nothing (TestWrapExtraSwappedBeforeRecord), as the
//     Symlink flag of an lstat here would have it;
//   - nothing between the two points reads an identity: the rest of the
//     policy, the mount layer and the plan read paths; the identities
//     are read only for the child's check (pathRules), after this.
//
// So a rule is never wider than with the lstat here: the same when
// nothing changed, none when the target changed in between. A rule that
// another source adds to (the target of cmd, an interpreter, a read path)
// is looked at here as before.
func ruleIDs(pol linuxPolicy, rc *spec.Resolved) map[string]RuleID {
	if testHookBeforeRuleIDs != nil {
		testHookBeforeRuleIDs()
	}
	ids := make(map[string]RuleID, len(pol.Paths)+len(rc.Mounts))
	look := func(p string) {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err == nil {
			ids[p] = RuleID{Dev: st.Dev, Ino: st.Ino, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, Symlink: st.Mode&unix.S_IFMT == unix.S_IFLNK}
		}
	}
	for _, r := range pol.Paths {
		if r.judged {
			ids[r.Path] = r.id
			continue
		}
		look(r.Path)
	}
	for _, m := range rc.Mounts {
		look(m.Path)
	}
	return ids
}

// planGroup decides whether the tree gets a cgroup, and returns the
// number of its cgroup.procs files (one per hierarchy).
func (w *wrapHost) planGroup(cfg spec.Config, opts wrapOptions) int {
	procs := func(m *cgroup.Manager) int {
		switch {
		case m == nil:
			return 0
		case m.Version == cgroup.V2:
			return 1
		}
		return len(m.Controllers)
	}
	if cl := cgroupLimits(cfg.Limits, w.avail); cl != (cgroup.Limits{}) {
		w.group = groupLimits
		return procs(w.cgm.For(cl))
	}
	if w.killGroup && w.cgm != nil && w.cgm.KillsRaceFree() {
		// Only for the kill: without it Run falls back to its own.
		w.group = groupKill
		return procs(w.cgm.For(cgroup.Limits{}))
	}
	return 0
}

// newNonce draws an exec nonce.
func newNonce() ([2]uint64, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return [2]uint64{}, err
	}
	return [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}, nil
}

// apply wires cmd as s says: the namespaces' SysProcAttr, the egress
// proxy, the tree's cgroup (last, as nothing can fail after it), and what
// the caller asked to receive.
func (w *wrapHost) apply(cmd *exec.Cmd, rc *spec.Resolved, target Target, host Host, s Spawn, opts wrapOptions) (g *EgressProc, err error) {
	var attr *syscall.SysProcAttr
	if s.Namespaces {
		if attr, err = nsAttr(cmd.SysProcAttr, s.NetNamespace, s.PIDNamespace); err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: %w", err)
		}
	}
	if w.eplan.on {
		if g, err = startEgress(w.eplan); err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: egress proxy: %w", err)
		}
		g.resolvDir = w.resolvDir
		defer func() {
			if err != nil {
				g.Close()
				g = nil
			}
		}()
	}
	tg, err := w.treeGroup(rc.Config.Limits)
	if err != nil {
		return nil, err
	}
	if n := len(tg.procs()); n != host.CgroupProcs {
		// The kill's cgroup could not be made (or has other
		// hierarchies than planned): the payload names what there is.
		host.CgroupProcs = n
		if s, err = PlanSpawn(rc, target, host); err != nil {
			tg.close()
			return nil, err
		}
	}
	if opts.group != nil {
		*opts.group = tg
	}
	if opts.pidNS != nil {
		*opts.pidNS = s.PIDNamespace
	}
	if opts.git != nil {
		w.gitEnd(opts.git, host.Layer)
	}
	w.wire(cmd, s, g, tg, opts.failurePipe)
	if attr != nil {
		cmd.SysProcAttr = attr
	}
	return g, nil
}

// treeGroup makes the tree's cgroup, with its limits written, as planned:
// nil when the tree has neither a cgroup nor limits.
func (w *wrapHost) treeGroup(l spec.Limits) (*treeGroup, error) {
	var tg *treeGroup
	switch w.group {
	case groupLimits:
		t, err := newTreeGroup(w.cgm, l, w.avail)
		if err != nil {
			return nil, fmt.Errorf("sandbox: WrapCommand: cannot make the tree's cgroup for Limits: %w", err)
		}
		tg = t
	case groupKill:
		tg, _ = newTreeGroup(w.cgm, spec.Limits{}, w.avail)
	}
	if tg == nil && !l.IsZero() {
		tg = &treeGroup{limits: l}
	}
	return tg, nil
}

// procs are the cgroup.procs files of t's cgroup (none without one).
func (t *treeGroup) procs() []*os.File {
	if t == nil || t.g == nil {
		return nil
	}
	return t.g.ProcsFiles()
}

// gitEnd fills what the git checks after the command need (see gitEnd).
func (w *wrapHost) gitEnd(git *gitEnd, layer *mountLayer) {
	if layer.used() {
		git.commonDirs = layer.missingGitEntries()
		git.repos = layer.git
		git.protected = layer.gitDirs
	}
	git.spots = layer.gitSpots
	git.depth = layer.gitDepth()
	git.pin() // before the program can change what the paths name
}

// wire sets cmd's Path, Args, Env and ExtraFiles as s says.
func (w *wrapHost) wire(cmd *exec.Cmd, s Spawn, g *EgressProc, tg *treeGroup, failurePipe *os.File) {
	extra := make([]*os.File, 0, len(s.Files))
	caller, procs := cmd.ExtraFiles, tg.procs()
	for _, role := range s.Files {
		var f *os.File
		switch role {
		case FileCaller:
			f, caller = caller[0], caller[1:]
		case FileFailurePipe:
			f = failurePipe
		case FileEgress:
			f = g.childEnd
		case FileCgroupProcs:
			f, procs = procs[0], procs[1:]
		case FileHelper:
			f = w.helper
		default:
			panic(errors.New("sandbox: WrapCommand: no file for role " + string(role)))
		}
		extra = append(extra, f)
	}
	if s.HelperFD >= 0 {
		cmd.Path = spawnhelper.Path(s.HelperFD)
	} else {
		cmd.Path = selfExe
	}
	cmd.Args = s.Args
	cmd.Env = s.Payload.Environ()
	cmd.ExtraFiles = extra
}
