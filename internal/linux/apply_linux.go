//go:build linux

package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spec"
)

// landlockABI returns the Landlock ABI go-landlock will use, and why it is 0.
// It mirrors go-landlock's own detection, including treating ABI 6+ without
// the scoped-signal erratum fix as ABI 5, so that a Config built for this ABI
// is exactly one go-landlock accepts.
func landlockABI() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, "not built into this kernel (CONFIG_SECURITY_LANDLOCK); a distribution kernel 5.13+ has it"
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, `built in but not enabled at boot: add "landlock" to the lsm= kernel parameter (` + lsmHint() + `)`
	case err != nil:
		return 0, "landlock_create_ruleset: " + err.Error()
	}
	if v >= 6 {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return v, ""
}

// lsmHint suggests an lsm= value: the running list with landlock first, so
// that enabling Landlock turns on nothing else.
func lsmHint() string {
	b, err := os.ReadFile("/sys/kernel/security/lsm")
	list := strings.TrimSpace(string(b))
	if err != nil || list == "" {
		return "keep the other modules of your current list, e.g. lsm=landlock,lockdown,yama,bpf"
	}
	return "lsm=landlock," + list
}

// kernelState is what the running kernel offers, asked once.
type kernelState struct {
	abi       int
	abiReason string
	seccomp   bool
}

var kernel = sync.OnceValue(func() kernelState {
	abi, reason := landlockABI()
	return kernelState{abi: abi, abiReason: reason, seccomp: seccomp.Supported()}
})

// Status is what Probe found of the running kernel, for sandbox.Status
// (its Mode is always spec.ModeLandlock, and Filesystem is Active).
type Status struct {
	Active  bool   // Landlock and seccomp are usable: ApplySelf and WrapCommand can confine
	Version int    // the Landlock ABI in use, 0 when none
	Network bool   // TCP connect rules are enforced by this kernel
	Reason  string // why something is missing, "; "-separated; "" when nothing is
}

// Probe asks the running kernel what it offers, by planning a Config that
// asks for a TCP connect rule; it applies nothing.
func Probe() Status {
	k := kernel()
	rc := &spec.Resolved{Config: spec.Config{AllowedTCPConnect: []string{"*:1"}}}
	rc.Connect = []spec.Endpoint{{Host: "*", Port: 1}}
	plan := linuxPlan(rc, buildLinuxPolicy(rc, k.abi, "/proc/self", nil).forSelf(), k.seccomp, k.abiReason)
	st := Status{Active: plan.Available, Version: k.abi}
	var notes []string
	if !plan.Available {
		notes = append(notes, plan.Reason)
	}
	for _, f := range plan.Features {
		switch {
		case f.Feature == spec.FeatureTCPConnect:
			st.Network = f.Enforced
		case f.Feature == spec.FeatureTCPHost:
			continue // a property of every Linux config, not of this kernel
		}
		if plan.Available && !f.Enforced {
			notes = append(notes, f.Feature+": "+f.Detail)
		}
	}
	st.Reason = strings.Join(notes, "; ")
	return st
}

// PlanFor is the plan of rc on this kernel (sandbox.PlanFor on Linux): it
// describes ApplySelf, with entries scoped to WrapCommand and Run where
// they differ. It applies nothing, but sets rc.Resolver and rc.ResolverAt
// when the egress layer's transparent path would generate a resolv.conf.
func PlanFor(rc *spec.Resolved) spec.Plan {
	k := kernel()
	// PlanFor describes ApplySelf, with entries scoped to WrapCommand and
	// Run where they differ: the mount layer's features and
	// file_metadata (see metadataPlan), judged by the layer
	// WrapCommand and Run would use from the caller's working directory
	// (their default).
	pol := buildLinuxPolicy(rc, k.abi, "/proc/self", nil).forSelf()
	cwd, _ := os.Getwd()
	eplan := egressPlanFor(rc)
	if len(eplan.transparent) > 0 {
		// The resolv.conf WrapCommand would generate, planned with
		// the host's as its stand-in source: nothing is written.
		if at, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil {
			rc.Resolver, rc.ResolverAt = at, at
		}
	}
	pol.Layer = newMountLayer(rc, nil, cwd, rootHost{pol: &pol})
	if rc.Config.AllowSysVIPC {
		ns := namespaces()
		pol.IPCNamespace = &ns
	}
	plan := withArtefacts(linuxPlan(rc, pol, k.seccomp, k.abiReason), pol)
	// Host names: ApplySelf's entry is linuxPlan's; WrapCommand's and
	// Run's is the egress layer's.
	eplan.addTo(&plan)
	plan.ChildHalf = childHalfLine()
	if pol.Layer.used() {
		plan.MountLayer = pol.Layer.plan.Lines()
		plan.ChildHalf += "; its namespace step makes the mount layer (" + strings.Join(pol.Layer.needs, "; ") + ")"
	}
	return plan
}

// ApplySelf restricts the calling process and all its threads. The whole
// policy is built and checked first, then the seccomp filter and the
// Landlock ruleset are prepared (nothing is applied on any error up to
// here), then every capability set of every thread is emptied, then the
// seccomp filter is loaded on every thread (with no_new_privs), then the
// Landlock ruleset is enforced on every thread, then the resource limits
// of rc.Config.Limits are set (see [Limits]). Only a failure after the
// capabilities are emptied leaves the process partly restricted; it is
// reported as spec.ErrPartiallyApplied (see applyLinux).
//
// Beyond what WrapCommand enforces, ApplySelf refuses (EPERM) every change
// of a file's mode, owner, times or extended attributes by path (chmod,
// fchmodat, chown, utimensat with a path, setxattr, ...), because Landlock
// does not check them and a multi-threaded process cannot have the
// read-only mounts that would: os.Chmod, os.Chown, os.Lchown and os.Chtimes
// fail. Go code uses the descriptor forms instead, on a file Landlock lets
// it open: (*os.File).Chmod, (*os.File).Chown, and for times the raw
// utimensat(fd, NULL, times, 0) (glibc's futimens; golang.org/x/sys's
// Futimes goes through the path /proc/self/fd/N and is refused, as is
// UtimesNanoAt(fd, "", ..., AT_EMPTY_PATH)). It also empties the
// permitted, effective, inheritable and ambient sets of every thread, so a
// root process holds no capability and, under no_new_privs,
// no program it executes gains one; the bounding set is left as it was,
// since then it grants nothing (see dropCapabilities).
func ApplySelf(rc *spec.Resolved) error {
	k := kernel()
	procSelf := "/proc/" + strconv.Itoa(os.Getpid())
	if err := spec.RefuseViews(rc.Config, "ApplySelf", "a process that confines itself cannot enter new namespaces (a multi-threaded Go process cannot unshare a mount or user namespace): use WrapCommand or Run"); err != nil {
		return err
	}
	pol, opened := selfPolicy(rc, k.abi, procSelf)
	defer opened.close()
	if err := spec.CheckApplicable(linuxPlan(rc, pol, k.seccomp, k.abiReason), rc.Config.Strict, spec.ScopeApplySelf, rc.Config.StrictAccepts()...); err != nil {
		return err
	}
	if err := applyOpened(pol, opened); err != nil {
		return err
	}
	// Last: lowering a limit cannot be undone without CAP_SYS_RESOURCE,
	// so it must not happen before a step that may still fail cleanly.
	if err := applyRlimits(rlimitsFor(rc.Config.Limits)); err != nil {
		return fmt.Errorf("%w: seccomp and landlock applied, resource limits failed: %w", spec.ErrPartiallyApplied, err)
	}
	return nil
}

// applyLinux applies a built policy to the calling process and all its
// threads, in an order that keeps every failure it can before the first
// irreversible step:
//
//  1. Assemble the seccomp filter and build the Landlock ruleset, a file
//     descriptor that restricts nothing until it is enforced. An error here
//     (a path removed since the policy was built, a rule the kernel
//     refuses) leaves the process as it was.
//  2. Empty the permitted, effective, inheritable and ambient sets of
//     every thread, in one all-thread capset (dropCapabilities). If the
//     calling thread's capset fails, no thread's sets changed (psx makes
//     the other threads' calls only after the caller's succeeded).
//  3. Load the seccomp filter with TSYNC, which installs it on every thread
//     and sets no_new_privs on every thread: what makes step 2's empty
//     permitted set final, and what enforcing a Landlock ruleset requires.
//     Since no thread holds CAP_SYS_ADMIN after step 2, the kernel accepts
//     the filter only from a calling thread with no_new_privs, so the load
//     need not pin its goroutine (seccomp.LoadUnprivileged says why that
//     matters and what it does when the goroutine moved).
//  4. Enforce the ruleset on every thread: with one system call and
//     LANDLOCK_RESTRICT_SELF_TSYNC from ABI 8, before that through
//     go-landlock's psx-based AllThreadsLandlockRestrictSelf, which makes
//     each thread make the call.
//
// The child half of WrapCommand also drops the capabilities before
// no_new_privs and its filter (internal/spawnhelper's helper.c).
//
// go-landlock's Config.Restrict would do the Landlock half in one call, but
// it adds the rules in the same call that enforces them, so a rule error
// could no longer be caught before anything is applied, and before ABI 8 it
// stops every thread twice (no_new_privs, then the ruleset), about 0.1 ms
// each. Its syscall package makes every Landlock call here.
func applyLinux(pol linuxPolicy) error { return applyOpened(pol, nil) }

// applyOpened is applyLinux with the descriptors of opened (selfPolicy)
// used for the rules of their paths.
func applyOpened(pol linuxPolicy, opened *openedPaths) error {
	filter, err := seccomp.Build(pol.Seccomp)
	if err != nil {
		return fmt.Errorf("sandbox: building seccomp filter: %w", err)
	}
	ruleset, err := openedRuleset(pol, opened)
	if err != nil {
		return err
	}
	defer unix.Close(ruleset)
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("sandbox: nothing enforced: %w", err)
	}
	if err := seccomp.LoadUnprivileged(filter); err != nil {
		return fmt.Errorf("%w: capabilities emptied, seccomp failed, landlock not applied: %w", spec.ErrPartiallyApplied, err)
	}
	if err := checkNoNewPrivs(); err != nil {
		return fmt.Errorf("%w: capabilities emptied and seccomp applied, landlock not applied: %w", spec.ErrPartiallyApplied, err)
	}
	if err := enforceRuleset(ruleset, pol.ABI); err != nil {
		return fmt.Errorf("%w: capabilities emptied and seccomp applied, landlock failed: %w", spec.ErrPartiallyApplied, err)
	}
	return nil
}

// landlockRuleset creates a Landlock ruleset holding pol's rules. The rights
// in pol are already limited to its ABI, and the file rules to rights that
// apply to files.
func landlockRuleset(pol linuxPolicy) (int, error) { return openedRuleset(pol, nil) }

// openedRuleset is landlockRuleset making the rule of a path opened holds
// with its descriptor (see openedPaths) rather than opening the path again.
func openedRuleset(pol linuxPolicy, opened *openedPaths) (int, error) {
	if pol.HandledFS == 0 && pol.HandledNet == 0 && pol.Scoped == 0 {
		return -1, errors.New("sandbox: landlock: the policy handles no access right")
	}
	attr := ll.RulesetAttr{
		HandledAccessFS:  uint64(pol.HandledFS),
		HandledAccessNet: uint64(pol.HandledNet),
		Scoped:           uint64(pol.Scoped),
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("sandbox: landlock_create_ruleset: %w", err)
	}
	fail := func(err error) (int, error) {
		unix.Close(fd)
		return -1, err
	}
	paths := pol.Paths
	if pol.ABI < 8 && pol.HandledFS&ll.AccessFSReadDir != 0 {
		// Before ABI 8 the ruleset is enforced through psx, whose cgo
		// variant lists /proc/<pid>/task after each thread's call and
		// aborts the process if it cannot (go-landlock issue 39; its
		// Restrict adds the same rule). Listing its own threads gives the
		// process nothing the default /proc/self rule does not.
		paths = append(slices.Clip(paths), linuxRule{Path: "/proc/" + strconv.Itoa(os.Getpid()) + "/task", Access: ll.AccessFSReadDir})
	}
	for _, r := range paths {
		// O_PATH follows symlinks: the rule is for the file the path names
		// now (or, for a descriptor opened holds, named when the policy
		// looked at it). Its rights were chosen for a file or a directory
		// when the policy was built. Directory rights on what is now a
		// file the kernel refuses (EINVAL); file rights on what is now a
		// directory would cover every file beneath it, and are refused
		// here.
		h, held := opened.take(r.Path)
		pfd := h.fd
		if !held {
			if pfd, err = unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
				return fail(fmt.Errorf("sandbox: landlock rule for %s: %w", r.Path, err))
			}
		}
		if r.Access&ll.AccessFSReadDir == 0 {
			// A held descriptor's type is the one openedPaths saw in its
			// fstat (a file's type never changes); any other is looked at.
			dir, err := h.dir, error(nil)
			if !held {
				var st unix.Stat_t
				err = unix.Fstat(pfd, &st)
				dir = st.Mode&unix.S_IFMT == unix.S_IFDIR
			}
			if err == nil && dir {
				err = errors.New("granted as a file, but it is a directory now")
			}
			if err != nil {
				unix.Close(pfd)
				return fail(fmt.Errorf("sandbox: landlock rule for %s: %w", r.Path, err))
			}
		}
		err = ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{AllowedAccess: uint64(r.Access), ParentFd: pfd}, 0)
		unix.Close(pfd)
		if err != nil {
			return fail(fmt.Errorf("sandbox: landlock rule for %s: landlock_add_rule: %w", r.Path, err))
		}
	}
	if pol.HandledNet != 0 {
		for _, rule := range []struct {
			ports  []uint16
			access uint64
		}{{pol.Connect, ll.AccessNetConnectTCP}, {pol.Bind, ll.AccessNetBindTCP}} {
			for _, port := range rule.ports {
				if err := ll.LandlockAddNetPortRule(fd, &ll.NetPortAttr{AllowedAccess: rule.access, Port: uint64(port)}, 0); err != nil {
					return fail(fmt.Errorf("sandbox: landlock rule for TCP port %d: landlock_add_rule: %w", port, err))
				}
			}
		}
	}
	return fd, nil
}

// enforceRuleset enforces ruleset on every thread of the process. Every
// thread must already have no_new_privs.
func enforceRuleset(ruleset, abi int) error {
	if abi >= 8 {
		return ll.LandlockRestrictSelf(ruleset, ll.FlagRestrictSelfTSync)
	}
	return ll.AllThreadsLandlockRestrictSelf(ruleset, 0)
}
