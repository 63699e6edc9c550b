package main

// What `sandbox run` says before the program starts about what was asked
// and is not in force: the plan's entries (sandbox.PlanFor) for
// WrapCommand and Run that are not enforced, kept to what the user asked
// for, a flag given or a Config field set, never the defaults. One line
// each on stderr, in the plan's own words, "feature (detail)" as --strict
// names them in its refusal. With --strict nothing is printed here: Run
// refuses, naming every entry not enforced (these and the rest).
//
// A mount not made is refused, not warned: the program would find nothing
// (or something else) where the user said their files are. The entry is
// judged by the plan, whatever its reason, so that the day the library can
// make a missing target (inside a root of its own) the plan says so and
// the run goes ahead.

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/spec"
)

// askedBy says, for each feature the Config's fields ask for, whether cfg
// asks for it. A feature missing from both askedBy and defaultFeatures is
// one this command does not know yet: it is reported, never hidden.
var askedBy = map[string]func(c sandbox.Config) bool{
	sandbox.FeatureMounts:         func(c sandbox.Config) bool { return len(c.Mounts) > 0 },
	sandbox.FeatureDenyWrite:      func(c sandbox.Config) bool { return len(c.DenyWritePaths) > 0 },
	sandbox.FeatureDenyRead:       func(c sandbox.Config) bool { return len(c.DenyReadPaths) > 0 },
	sandbox.FeatureGitProtect:     gitProtectionAsked,
	sandbox.FeatureTCPConnect:     func(c sandbox.Config) bool { return len(c.AllowedTCPConnect) > 0 },
	sandbox.FeatureTCPHost:        func(c sandbox.Config) bool { return len(c.AllowedTCPConnect) > 0 },
	sandbox.FeatureTCPAnyPort:     func(c sandbox.Config) bool { return len(c.AllowedTCPConnect) > 0 },
	sandbox.FeatureResolver:       func(c sandbox.Config) bool { return len(c.AllowedTCPConnect) > 0 },
	sandbox.FeatureTLSTrust:       func(c sandbox.Config) bool { return len(c.AllowedTCPConnect) > 0 },
	sandbox.FeatureTCPBind:        func(c sandbox.Config) bool { return len(c.AllowedTCPBind) > 0 },
	sandbox.FeatureUDP:            func(c sandbox.Config) bool { return c.AllowUDP },
	sandbox.FeatureUnixSockets:    func(c sandbox.Config) bool { return c.AllowUnixSockets },
	sandbox.FeatureSpawn:          func(c sandbox.Config) bool { return c.AllowProcessSpawn },
	sandbox.FeatureSysVIPC:        func(c sandbox.Config) bool { return c.AllowSysVIPC },
	sandbox.FeatureExecWrites:     func(c sandbox.Config) bool { return c.AllowExecWritePaths },
	sandbox.FeatureSharedMem:      func(c sandbox.Config) bool { return c.AllowSharedMemory },
	sandbox.FeatureCamera:         func(c sandbox.Config) bool { return c.AllowCamera },
	sandbox.FeatureMicrophone:     func(c sandbox.Config) bool { return c.AllowMicrophone },
	sandbox.FeatureLimitProcesses: func(c sandbox.Config) bool { return c.Limits.Processes > 0 },
	sandbox.FeatureLimitMemory:    func(c sandbox.Config) bool { return c.Limits.MemoryBytes > 0 },
	sandbox.FeatureLimitCPUTime:   func(c sandbox.Config) bool { return c.Limits.CPUTime > 0 },
	sandbox.FeatureLimitFileSize:  func(c sandbox.Config) bool { return c.Limits.FileSizeBytes > 0 },
	sandbox.FeatureLimitOpenFiles: func(c sandbox.Config) bool { return c.Limits.OpenFiles > 0 },
}

// defaultFeatures are the sandbox's own protections, in force or not
// whatever the Config asks: not warned about (`sandbox plan` and
// `sandbox doctor` show them; --strict refuses them). git_commondir is
// one: under run a commondir the program created is removed once its tree
// is gone, and `run` says so (its "removed ..." line).
var defaultFeatures = map[string]bool{
	sandbox.FeatureFilesystem: true, sandbox.FeatureTruncate: true, sandbox.FeatureIoctlDev: true,
	sandbox.FeatureExec: true, sandbox.FeatureExecLoader: true, sandbox.FeatureScopeUnix: true,
	sandbox.FeatureScopeSignal: true, sandbox.FeatureMetadata: true, sandbox.FeatureSyscalls: true,
	sandbox.FeatureGitCommonDir: true, sandbox.FeaturePrivateTmp: true, sandbox.FeatureWriteNoexec: true,
	"ui_restrictions": true, "unelevated": true, // Windows' Job Object
}

// gitProtectionAsked: the write paths (and writable mounts) are protected
// unless no_git_protection is set.
func gitProtectionAsked(c sandbox.Config) bool {
	if c.NoGitProtection {
		return false
	}
	for _, m := range c.Mounts {
		if m.Write {
			return true
		}
	}
	return len(c.AllowedWritePaths) > 0
}

// notInForce returns the plan's entries for WrapCommand and Run that are
// not enforced and that cfg asked for (see askedBy).
func notInForce(cfg sandbox.Config) ([]sandbox.Enforcement, error) {
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		return nil, err
	}
	return askedNotEnforced(p, cfg), nil
}

// askedNotEnforced is notInForce's choice among p's entries.
func askedNotEnforced(p sandbox.Plan, cfg sandbox.Config) []sandbox.Enforcement {
	var out []sandbox.Enforcement
	for _, f := range p.NotEnforced() {
		if f.Scope != "" && f.Scope != sandbox.ScopeCommand {
			continue
		}
		asked, known := askedBy[f.Feature]
		if known && asked(cfg) || !known && !defaultFeatures[f.Feature] {
			out = append(out, f)
		}
	}
	return out
}

// preflight prints the warnings and reports whether the run may go on: a
// mount not made is refused (exitRunFailed). Under --strict it prints
// nothing and lets Run refuse.
//
// On Linux without a terminal it plans nothing itself: it returns the
// check that Run calls with the plan of the spawn it is about to start
// (spec.PlanCheck), which prints the same warnings from that plan and
// refuses (errRefused) before anything is applied. The plan is then built
// once per run, and what is warned about is the plan that runs. With a
// terminal the warnings come first, from PlanFor, as elsewhere: Run puts
// the caller's terminal in raw mode before it plans.
func preflight(cfg sandbox.Config, tty bool, stderr io.Writer) (spec.PlanCheck, int, bool) {
	if cfg.Strict {
		return nil, 0, true
	}
	if runtime.GOOS == "linux" && !tty {
		return func(p spec.Plan) error {
			if warn(askedNotEnforced(sandbox.Plan(p), cfg), stderr) {
				return errRefused
			}
			return nil
		}, 0, true
	}
	ne, err := notInForce(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sandbox run: %v\n", err)
		return nil, exitRunFailed, false
	}
	if warn(ne, stderr) {
		return nil, exitRunFailed, false
	}
	return nil, 0, true
}

// errRefused is the check's refusal of a mount not made, said already.
var errRefused = errors.New("sandbox run: refused")

// warn prints one line per entry of ne and reports whether the run is
// refused (a mount not made).
func warn(ne []sandbox.Enforcement, stderr io.Writer) bool {
	refused := false
	for _, f := range ne {
		if f.Feature == sandbox.FeatureMounts {
			refused = true
			fmt.Fprintf(stderr, "sandbox run: refused: %s (%s)\n", f.Feature, f.Detail)
			continue
		}
		fmt.Fprintf(stderr, "sandbox run: not in force: %s (%s)\n", f.Feature, shorten(f.Detail))
	}
	return refused
}

// maxWarning bounds a warning's detail: a plan entry can list every
// repository of a workspace, and `sandbox plan` shows it whole.
const maxWarning = 400

// shorten cuts s to maxWarning bytes at a word, saying where the rest is.
func shorten(s string) string {
	if len(s) <= maxWarning {
		return s
	}
	cut := strings.LastIndexByte(s[:maxWarning], ' ')
	if cut < maxWarning/2 {
		cut = maxWarning
	}
	return s[:cut] + " ... (sandbox plan shows the rest)"
}
