//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/seccomp"
)

type linuxSandbox struct{}

func newPlatform() Sandbox { return linuxSandbox{} }

func (linuxSandbox) Available() bool { return Probe().Active }
func (linuxSandbox) Mode() string    { return ModeLandlock }

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

func probePlatform() Status {
	k := kernel()
	rc := &resolvedConfig{cfg: Config{AllowedTCPConnect: []string{"*:1"}}}
	rc.connect = []Endpoint{{Host: "*", Port: 1}}
	plan := linuxPlan(rc, buildLinuxPolicy(rc, k.abi, "/proc/self", nil), k.seccomp, k.abiReason)
	st := Status{Active: plan.Available, Mode: ModeLandlock, Version: k.abi, Filesystem: plan.Available}
	var notes []string
	if !plan.Available {
		notes = append(notes, plan.Reason)
	}
	for _, f := range plan.Features {
		switch {
		case f.Feature == FeatureTCPConnect:
			st.Network = f.Enforced
		case f.Feature == FeatureTCPHost:
			continue // a property of every Linux config, not of this kernel
		}
		if plan.Available && !f.Enforced {
			notes = append(notes, f.Feature+": "+f.Detail)
		}
	}
	st.Reason = strings.Join(notes, "; ")
	return st
}

func planPlatform(rc *resolvedConfig) Plan {
	k := kernel()
	pol := buildLinuxPolicy(rc, k.abi, "/proc/self", nil)
	return withArtefacts(linuxPlan(rc, pol, k.seccomp, k.abiReason), pol)
}

// ApplySelf restricts the calling process and all its threads. Order: the
// whole policy is built and checked first (nothing applied on any error),
// then Landlock is applied to every thread, then the seccomp filter is
// loaded with TSYNC. Only a failure in that last step leaves the process
// partly restricted; it is reported as ErrPartiallyApplied.
func (linuxSandbox) ApplySelf(cfg Config) error {
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	k := kernel()
	procSelf := "/proc/" + strconv.Itoa(os.Getpid())
	pol := buildLinuxPolicy(rc, k.abi, procSelf, nil)
	if err := checkApplicable(linuxPlan(rc, pol, k.seccomp, k.abiReason), cfg); err != nil {
		return err
	}
	return applyLinux(pol)
}

// applyLinux applies a built policy to the calling process: Landlock, then
// seccomp. Everything that can fail before the first irreversible step
// (assembling the filter, building the Landlock config) is done first.
func applyLinux(pol linuxPolicy) error {
	filter, err := seccomp.Build(pol.Seccomp)
	if err != nil {
		return fmt.Errorf("sandbox: building seccomp filter: %w", err)
	}
	if err := applyLandlock(pol); err != nil {
		return err
	}
	if err := seccomp.Load(filter); err != nil {
		return fmt.Errorf("%w: landlock applied, seccomp failed: %w", ErrPartiallyApplied, err)
	}
	return nil
}

// applyLandlock applies the Landlock part of pol to every thread.
func applyLandlock(pol linuxPolicy) error {
	llCfg, err := landlock.NewConfig(pol.HandledFS, pol.HandledNet, pol.Scoped)
	if err != nil {
		return fmt.Errorf("sandbox: landlock config: %w", err)
	}
	rules := make([]landlock.Rule, 0, len(pol.Paths)+len(pol.Connect)+len(pol.Bind))
	for _, r := range pol.Paths {
		rules = append(rules, landlock.PathAccess(r.Access, r.Path))
	}
	if pol.HandledNet != 0 {
		for _, port := range pol.Connect {
			rules = append(rules, landlock.ConnectTCP(port))
		}
		for _, port := range pol.Bind {
			rules = append(rules, landlock.BindTCP(port))
		}
	}
	if err := llCfg.Restrict(rules...); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	return nil
}
