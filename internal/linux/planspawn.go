package linux

// PlanSpawn: what WrapCommand and Run hand the child half (its payload) and
// how they wire the parent's *exec.Cmd, computed from data alone. Pure: it
// builds on every OS, and its golden tests (planspawn_test.go) run
// everywhere; spawn_linux.go gathers the host facts it needs (Host) and
// applies what it returns (Spawn).

import (
	"fmt"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// Target is the program a spawn runs, as the caller's *exec.Cmd names it,
// and what the caller asks of the spawn.
type Target struct {
	// Path is the program, absolute and clean (what execve gets);
	// Resolved is it with every symbolic link resolved.
	Path, Resolved string
	// Argv is the program's argv (cmd.Args, or cmd.Path alone).
	Argv []string
	// Env is the program's environment, without the child half's own
	// variables (trampoline.Reserved).
	Env []string
	// Dir is the program's working directory, absolute ("" when unknown).
	Dir string
	// ExtraFiles is the number of the caller's cmd.ExtraFiles: they keep
	// descriptors 3 and up in the program.
	ExtraFiles int
	SpawnOptions
}

// SpawnOptions are the parts of a spawn only Run asks for.
type SpawnOptions struct {
	// FailurePipe: a pipe after the caller's ExtraFiles on which the child
	// half reports why it could not start the target.
	FailurePipe bool
	// DenySetsid and DenyPdeathsigChange tighten the seccomp filter (see
	// seccomp.Policy): every process of the tree stays in Run's session,
	// and the target keeps the parent-death signal Run gives it.
	DenySetsid, DenyPdeathsigChange bool
	// PIDNamespace asks for a PID namespace of the tree's own where the
	// tree can spawn and namespaces are available (Spawn.PIDNamespace
	// says whether it is used).
	PIDNamespace bool
	// Check, when set, is called with the spawn's plan once Strict's check
	// has passed; its error stops the spawn (see spec.PlanCheck).
	Check spec.PlanCheck
}

// RuleID is what lstat(2) said of a rule path when the host facts were
// gathered: its device and inode, whether it is a directory, whether it is
// a symbolic link.
type RuleID struct {
	Dev, Ino     uint64
	Dir, Symlink bool
}

// Host is every fact of the host a spawn's plan depends on, gathered by the
// apply half (spawn_linux.go) before PlanSpawn: PlanSpawn reads nothing
// else, given rc.Cgroup, the cgroup the tree gets, which the apply half
// sets too (with rc.Cgroup nil the child half's rlimits assume none, and
// the plan's limits entries would look for one on the host).
type Host struct {
	// ABI is the kernel's Landlock ABI (0: none, ABIReason says why);
	// Seccomp whether seccomp filters can be loaded.
	ABI       int
	ABIReason string
	Seccomp   bool
	// Policy is the Config in Landlock and seccomp terms for ABI, with
	// the target executable (buildLinuxPolicy, which reads the target's
	// interpreter chain and the exec directories' helpers on the host).
	Policy linuxPolicy
	// Layer is the mount layer's decision and plan (newMountLayer, which
	// reads the host's mounts and walks for git repositories).
	Layer *mountLayer
	// Namespaces is the namespace probe's result, probed only when the
	// spawn asks for namespaces of its own (needNamespaceProbe).
	Namespaces nsState
	// Rules are the lstat results of the policy's rule paths and the
	// Mounts' sources, by path; a path missing here could not be looked
	// at (gone), and gets no rule.
	Rules map[string]RuleID
	// Egress is the egress layer's part of the spawn.
	Egress SpawnEgress
	// Helper: the static helper is the child half (else the Go
	// trampoline, a re-exec of this program); SelfExeErr, without the
	// helper, is why this program cannot be re-executed.
	Helper     bool
	SelfExeErr error
	// AttrErr is why the caller's SysProcAttr cannot be combined with the
	// sandbox's namespaces (nsAttr), nil when it can.
	AttrErr error
	// ParentMountNS is the device and inode of this process's mount
	// namespace (ParentMountNSErr: why it could not be read).
	ParentMountNS    [2]uint64
	ParentMountNSErr error
	// Nonce is the spawn's exec nonce (NonceErr: why none could be
	// drawn), used when the filter checks it.
	Nonce    [2]uint64
	NonceErr error
	// Creds are the caller's credentials (currentCreds: whether it is
	// uid 0, and its hard limits by limit feature), which the plan's
	// limits entries read; RlimitCeilings are its hard limits by resource
	// (rlimitCeilings), which the child half inherits and cannot raise:
	// the rlimits it sets are the Limits clamped to them (commandRlimits,
	// with the cgroup rc.Cgroup names). Both are gathered, and read, only
	// when the Config has Limits.
	Creds          selfCreds
	RlimitCeilings map[int]uint64
	// CgroupProcs is the number of cgroup.procs files of the tree's
	// cgroup (one per hierarchy), 0 when it has none.
	CgroupProcs int
}

// SpawnEgress is the egress layer's part of a spawn, as data: what the
// apply half's egress plan (egressPlanFor) decided (spawnEgress).
type SpawnEgress struct {
	// On: a network namespace, and the caller's proxy on Port in it.
	On   bool
	Port uint16
	// Transparent are the transparent path's ports, Pool the number of
	// inbound pool sockets the child half makes.
	Transparent []uint16
	Pool        uint32
	// Connect, HandledNet and AllowUDP are the Landlock connect ports, the
	// network rights handled and seccomp's UDP permission in the
	// namespace (egressPlan.restrictConnect).
	Connect    []uint16
	HandledNet landlock.AccessNetSet
	AllowUDP   bool
	// Env is the program's environment with the proxy variables (proxyEnv).
	Env []string
	// plan is the egress plan itself, whose entries PlanSpawn adds to the
	// spawn's plan (egressPlan.addTo; the zero plan adds none).
	plan egressPlan
}

// spawnEgress is the egress plan e's part of a spawn whose policy is pol
// and whose program's environment is env.
func spawnEgress(e egressPlan, pol linuxPolicy, env []string) SpawnEgress {
	if !e.on {
		return SpawnEgress{plan: e}
	}
	r := linuxPolicy{ABI: pol.ABI, HandledNet: pol.HandledNet, Seccomp: pol.Seccomp}
	e.restrictConnect(&r)
	return SpawnEgress{On: true, Port: e.port, Transparent: e.transparent, Pool: uint32(e.poolSize()),
		Connect: r.Connect, HandledNet: r.HandledNet, AllowUDP: r.Seccomp.AllowUDP,
		Env: proxyEnv(env, e), plan: e}
}

// FileRole names what one of cmd.ExtraFiles is.
type FileRole string

// The roles of cmd.ExtraFiles, in the order they come.
const (
	FileCaller      FileRole = "caller"       // one of the caller's own ExtraFiles, in order
	FileFailurePipe FileRole = "failure-pipe" // the write end of Run's failure pipe (Payload.ErrFD)
	FileEgress      FileRole = "egress"       // the child's end of the egress handoff channel (Payload.Net.FD)
	FileCgroupProcs FileRole = "cgroup.procs" // a cgroup.procs file of the tree's cgroup (Payload.CgroupFDs)
	FileHelper      FileRole = "helper"       // the static helper's sealed memfd, executed through /proc/self/fd
)

// Spawn is a spawn's plan: the child's payload, and the parent's wiring of
// the *exec.Cmd as data.
type Spawn struct {
	// Plan is the plan the spawn was checked against (Strict).
	Plan spec.Plan
	// Seccomp is the policy Payload.Filters[0] was built from.
	Seccomp seccomp.Policy
	// Payload is what the child half applies.
	Payload trampoline.Payload
	// Files are cmd.ExtraFiles, by role: descriptor 3+i is Files[i].
	Files []FileRole
	// HelperFD is the helper's descriptor (cmd.Path is
	// /proc/self/fd/HelperFD), or -1 for the Go trampoline (cmd.Path is
	// /proc/self/exe). Args is cmd.Args: the trampoline's argv[0], then
	// the target's argv.
	HelperFD int
	Args     []string
	// Namespaces: the child is cloned into new namespaces (nsAttr: mount,
	// IPC, a user namespace when the caller is not root), with a network
	// namespace when NetNamespace and a PID namespace when PIDNamespace.
	Namespaces, NetNamespace, PIDNamespace bool
}

// PlanSpawn plans the spawn of target under rc on host: it checks the plan
// (Strict), and returns the payload and wiring, or the error WrapCommand
// fails with, in the order WrapCommand has always checked.
func PlanSpawn(rc *spec.Resolved, target Target, host Host) (Spawn, error) {
	s := Spawn{HelperFD: -1}
	pol := spawnPolicy(rc, host)
	s.Plan = linuxPlanCreds(rc, pol, host.Seccomp, host.ABIReason, host.Creds)
	host.Egress.plan.addTo(&s.Plan)
	if err := spec.CheckApplicable(s.Plan, rc.Config.Strict, spec.ScopeCommand, rc.Config.StrictAccepts()...); err != nil {
		return Spawn{}, err
	}
	if target.Check != nil {
		if err := target.Check(s.Plan); err != nil {
			return Spawn{}, err
		}
	}
	if err := refuseViews(rc, pol.Layer); err != nil {
		return Spawn{}, err
	}
	env := target.Env
	if host.Egress.On {
		// Inside its namespace the program can reach nothing but the
		// proxy and the transparent path's listeners (lo only, every
		// route local): Landlock says so too.
		pol.Connect = slices.Clone(host.Egress.Connect)
		pol.HandledNet = host.Egress.HandledNet
		pol.Seccomp.AllowUDP = host.Egress.AllowUDP
		env = host.Egress.Env
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
	s.PIDNamespace = target.PIDNamespace && rc.Config.AllowProcessSpawn && host.Namespaces.ok
	ipcNS := pol.IPCNamespace != nil && pol.IPCNamespace.ok
	// With egress, a network namespace too, whether or not the mount
	// layer has anything to do. Every such start has a private IPC
	// namespace (nsAttr): for AllowSysVIPC that is all it needs.
	s.Namespaces = pol.Layer.used() || host.Egress.On || s.PIDNamespace || ipcNS
	s.NetNamespace = s.Namespaces && host.Egress.On
	if s.Namespaces && host.AttrErr != nil {
		return Spawn{}, fmt.Errorf("sandbox: WrapCommand: %w", host.AttrErr)
	}
	if err := s.planPayload(rc, target, host, pol, env); err != nil {
		return Spawn{}, err
	}
	s.wire(target, host)
	return s, nil
}

// needNamespaceProbe reports whether PlanSpawn reads Host.Namespaces for
// rc and target (the mount layer probes them itself when it needs them).
func needNamespaceProbe(rc *spec.Resolved, target Target) bool {
	return rc.Config.AllowSysVIPC || target.PIDNamespace && rc.Config.AllowProcessSpawn
}

// spawnPolicy is host.Policy with the mount layer, and, for AllowSysVIPC,
// the namespaces' availability: System V IPC allowed, in a private IPC
// namespace, the namespaces' (nsAttr), where they can be made; no mounts.
func spawnPolicy(rc *spec.Resolved, host Host) linuxPolicy {
	pol := host.Policy
	pol.Layer = host.Layer
	if rc.Config.AllowSysVIPC {
		ns := host.Namespaces
		pol.IPCNamespace = &ns
	}
	return pol
}

// planPayload fills s.Payload and s.Seccomp: the Landlock rules, the
// seccomp filter with its nonce, and the namespace step.
func (s *Spawn) planPayload(rc *spec.Resolved, target Target, host Host, pol linuxPolicy, env []string) error {
	sp := pol.Seccomp
	sp.DenySetsid = target.DenySetsid
	sp.DenyPdeathsigChange = target.DenyPdeathsigChange
	// Without spawning and without an exec allowlist the target is the
	// only program its process may ever run (see seccomp's exec_nonce.go).
	sp.ExecNonce = !rc.Config.AllowProcessSpawn && len(rc.Exec) == 0
	s.Seccomp = sp
	filter, err := trampolineFilter(sp)
	if err != nil {
		return err
	}
	if !host.Helper && host.SelfExeErr != nil {
		return host.SelfExeErr
	}
	p := &s.Payload
	*p = trampoline.Payload{
		Path:       target.Path,
		Env:        env,
		FirstFD:    3 + target.ExtraFiles,
		ErrFD:      -1,
		HandledFS:  uint64(pol.HandledFS),
		HandledNet: uint64(pol.HandledNet),
		Scoped:     uint64(pol.Scoped),
		Rules:      pathRules(pol, host, s.Namespaces, len(rc.Mounts)),
	}
	if pol.HandledNet != 0 {
		for _, port := range pol.Connect {
			p.Ports = append(p.Ports, trampoline.PortRule{Port: uint64(port), Access: ll.AccessNetConnectTCP})
		}
		for _, port := range pol.Bind {
			p.Ports = append(p.Ports, trampoline.PortRule{Port: uint64(port), Access: ll.AccessNetBindTCP})
		}
	}
	if !rc.Config.Limits.IsZero() {
		var cg spec.Cgroup
		if rc.Cgroup != nil {
			cg = *rc.Cgroup
		}
		p.Rlimits = commandRlimits(rc.Config.Limits, cg, host.RlimitCeilings)
	}
	p.Filters = [][]trampoline.SockFilter{filter.prog}
	if sp.AllowExec && sp.ExecNonce {
		if host.NonceErr != nil {
			return fmt.Errorf("sandbox: WrapCommand: exec nonce: %w", host.NonceErr)
		}
		p.Filters[0], p.ExecNonce = filter.patched(host.Nonce), host.Nonce
	}
	if s.Namespaces {
		return withNamespaceStep(p, rc, pol, host)
	}
	return nil
}

// wire lays out cmd.ExtraFiles (the caller's, then the failure pipe, the
// egress channel's child end, the tree cgroup's cgroup.procs files and the
// helper) and fills the payload's descriptors, rlimits and cmd.Args.
func (s *Spawn) wire(target Target, host Host) {
	p := &s.Payload
	for range target.ExtraFiles {
		s.Files = append(s.Files, FileCaller)
	}
	if target.FailurePipe {
		p.ErrFD = p.FirstFD
		s.Files = append(s.Files, FileFailurePipe)
	}
	if host.Egress.On {
		// The child's end of the handoff channel: above the failure
		// pipe, so marked close-on-exec with it; the child closes it
		// itself once it has sent the listener.
		s.Files = append(s.Files, FileEgress)
		p.Net = trampoline.NetStep{FD: 3 + len(s.Files) - 1, Port: host.Egress.Port, Transparent: host.Egress.Transparent, Pool: host.Egress.Pool}
	}
	// The tree's cgroup, whose cgroup.procs descriptors the child half
	// writes "0" to before anything else (failing closed).
	for range host.CgroupProcs {
		p.CgroupFDs = append(p.CgroupFDs, 3+len(s.Files))
		s.Files = append(s.Files, FileCgroupProcs)
	}
	if host.Helper {
		// The helper is the last inherited descriptor, above the
		// failure pipe; exec.Cmd puts it at exactly that number in the
		// child, which executes it through /proc/self/fd. The helper
		// marks it close-on-exec with everything from FirstFD up.
		s.Files = append(s.Files, FileHelper)
		s.HelperFD = 3 + len(s.Files) - 1
	}
	s.Args = append([]string{trampoline.Arg0}, target.Argv...)
}
