package sandbox

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/openparallax/sandbox/internal/darwin"
	"github.com/openparallax/sandbox/internal/windows"
)

// For returns the plan of one entry point: scope is [ScopeApplySelf]
// (Sandbox.ApplySelf) or [ScopeCommand] (WrapCommand and Run). Its
// Features are the entries without a Scope and those with scope; the
// other entry point's are left out, so that a feature appears at most
// once per entry. For ScopeApplySelf the parts only WrapCommand and Run
// have (MountLayer, ChildHalf, Egress) are cleared as well. Describe on
// the result speaks of that entry point alone: what a program started by
// Run meets is not what an agent that called ApplySelf meets (for
// example, host names in AllowedTCPConnect are enforced by Run's egress
// layer, never by ApplySelf).
//
// Another scope returns p unchanged: p itself is the union of both.
func (p Plan) For(scope string) Plan {
	if scope != ScopeApplySelf && scope != ScopeCommand {
		return p
	}
	out := p
	out.Features = slices.DeleteFunc(slices.Clone(p.Features), func(f Enforcement) bool {
		return f.Scope != "" && f.Scope != scope
	})
	if scope == ScopeApplySelf {
		out.MountLayer, out.ChildHalf, out.Egress = nil, "", nil
	}
	return out
}

// PlanForPlatform is [PlanFor] as the engine of platform ("linux",
// "darwin" or "windows") would make it, so that a tool on one OS can show
// what a Config becomes on another. On this machine's own platform it is
// PlanFor. Elsewhere it is computed here, as data, with these assumptions
// about the other machine, which it cannot ask:
//
//   - darwin: /usr/bin/sandbox-exec is there (the plan of WrapCommand and
//     Run; ApplySelf is never available on macOS). The paths are those of
//     this machine, resolved here: a path under /tmp, /var or /etc, which
//     are symlinks on macOS, is what [SeatbeltProfile] refuses.
//   - windows: the caller is unelevated and not in a job already.
//
// The Linux plan asks the running kernel (Landlock's ABI, namespaces), so
// it is only available on Linux: elsewhere "linux" is an error, as is an
// unknown platform.
func PlanForPlatform(cfg Config, platform string) (Plan, error) {
	if platform == runtime.GOOS {
		return PlanFor(cfg)
	}
	rc, err := resolve(cfg)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	switch platform {
	case "darwin":
		p = Plan(darwin.Plan(rc, true))
	case "windows":
		p = Plan(windows.PlanFor(rc, windows.Host{}))
	case "linux":
		return Plan{}, fmt.Errorf("sandbox: the Linux plan asks the running kernel (Landlock's ABI, namespaces): it is made only on Linux, not on %s", runtime.GOOS)
	default:
		return Plan{}, fmt.Errorf("sandbox: no plan for platform %q (want linux, darwin or windows)", platform)
	}
	p.Grants = grantsOf(rc)
	return p, nil
}
