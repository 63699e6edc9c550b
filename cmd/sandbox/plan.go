package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/openparallax/sandbox"
)

// planReport is plan's --json output: the plan of one entry point, and
// with --platform darwin the Seatbelt profile.
type planReport struct {
	Plan     sandbox.Plan    `json:"plan"`
	Entry    string          `json:"entry"`
	Seatbelt *seatbeltReport `json:"seatbelt,omitempty"`
}

type seatbeltReport struct {
	Profile string   `json:"profile,omitempty"`
	Params  []string `json:"params,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// plan prints what a Config would be on this machine for one entry point
// (--entry, default wrap), or on another platform (--platform), computed
// here as data; with --platform darwin also its Seatbelt profile.
func plan(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", stderr)
	var a planArgs
	a.register(fs)
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "plan", "unexpected argument %q", fs.Arg(0))
	}
	scope, err := a.check()
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	cfg, err := a.cf.config()
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	// The program's environment, as run makes it; ApplySelf cannot
	// replace the environment of the process that calls it.
	// --go-cache's grant and GOCACHE, as run adds them (a DIR not made
	// yet is left out, and said).
	var note string
	if scope == sandbox.ScopeCommand {
		if err = a.pf.configEnv(&cfg); err == nil {
			note, err = a.pf.planGoCache(&cfg)
		}
	} else if cfg.Env != nil || a.pf.keepEnv || len(a.pf.env) > 0 || a.pf.goCache != "" {
		err = errors.New("--env, --keep-env, --go-cache and env in --config are for --entry wrap: ApplySelf cannot replace the environment of the process that calls it")
	}
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	if note != "" {
		fmt.Fprintln(stderr, "sandbox plan: note:", note)
	}
	all, err := sandbox.PlanForPlatform(cfg, a.platform)
	if err != nil {
		return usageError(stderr, "plan", "%v", configFlagError(err, nil))
	}
	p := all.For(scope)
	if a.describe {
		p.TimeLimit = a.timeout
		fmt.Fprint(stdout, p.Describe())
		return exitOK
	}
	rep := planReport{Plan: p, Entry: a.entry}
	if a.platform == "darwin" {
		rep.Seatbelt = new(seatbeltReport)
		if text, params, err := sandbox.SeatbeltProfile(cfg); err != nil {
			rep.Seatbelt.Error = err.Error()
		} else {
			rep.Seatbelt.Profile, rep.Seatbelt.Params = text, params
		}
	}
	if a.json {
		printJSON(stdout, rep)
		return exitOK
	}
	printPlan(stdout, rep, scope)
	return exitOK
}

// printPlan is plan's text: the features of one entry point, the rules,
// and the Seatbelt profile when there is one.
func printPlan(stdout io.Writer, rep planReport, scope string) {
	p := rep.Plan
	on := colour(stdout)
	avail := "available"
	if !p.Available {
		avail = "UNAVAILABLE: " + p.Reason
	}
	ver := ""
	if p.Version > 0 {
		ver = fmt.Sprintf(" ABI %d", p.Version)
	}
	fmt.Fprintf(stdout, "Plan on %s: %s%s (%s)\nEntry point: %s\n\n", p.Platform, p.Mechanism, ver, avail, entryTitle(scope))
	for _, f := range p.Features {
		featureLine(stdout, on, f.Feature, f.Enforced, f.Detail, f.Hint)
	}
	if len(p.Paths) > 0 {
		fmt.Fprintln(stdout, "\nFilesystem rules:")
		for _, r := range p.Paths {
			fmt.Fprintf(stdout, "  %s\n      %s  (%s)\n", r.Path, wrap(r.Access, 66, "      "), r.Source)
		}
	}
	section(stdout, "Network rules:", p.Network)
	if e := p.Egress; e != nil {
		section(stdout, "Egress by host name (WrapCommand, Run, sandbox run):", []string{egressLine(e)})
	}
	section(stdout, "Syscall filter:", p.Syscalls)
	section(stdout, "Default paths absent here:", p.Skipped)
	section(stdout, "Mount layer (WrapCommand, Run, sandbox run; in a new mount namespace):", p.MountLayer)
	if p.ChildHalf != "" {
		section(stdout, "Spawning (WrapCommand, Run, sandbox run):", []string{p.ChildHalf})
	}
	if rep.Seatbelt == nil {
		return
	}
	fmt.Fprintln(stdout, "\nmacOS Seatbelt profile (sandbox-exec -p PROFILE -D NAME=VALUE ...):")
	if rep.Seatbelt.Error != "" {
		fmt.Fprintf(stdout, "  not generated: %s\n", rep.Seatbelt.Error)
		return
	}
	for _, prm := range rep.Seatbelt.Params {
		fmt.Fprintf(stdout, "  -D %s\n", prm)
	}
	fmt.Fprintln(stdout, "  "+strings.ReplaceAll(strings.TrimRight(rep.Seatbelt.Profile, "\n"), "\n", "\n  "))
}

// egressLine is plan's line on how host names are enforced.
func egressLine(e *sandbox.EgressPlan) string {
	line := "mode " + e.Mode + ": " + strings.Join(e.Hosts, ", ")
	if e.Proxy != "" {
		line += "; the program sees the proxy at " + e.Proxy + " (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY set)"
	}
	switch {
	case e.Reason != "" && e.Mode == sandbox.EgressPortOnly:
		line += "; host names not enforced: " + e.Reason
	case e.Reason != "":
		line += "; no transparent path: " + e.Reason
	}
	if e.Clients != "" {
		line += "; clients: " + e.Clients
	}
	if len(e.AnyPort) > 0 && e.Mode != sandbox.EgressPortOnly {
		line += "; on any port only through the proxy: " + strings.Join(e.AnyPort, ", ") + " (see " + sandbox.FeatureTCPAnyPort + ")"
	}
	return line
}

// planArgs are plan's flags: the Config's, the program's (checked only),
// and plan's own.
type planArgs struct {
	cf              configFlags
	pf              progFlags
	json, describe  bool
	timeout         time.Duration
	platform, entry string
}

func (a *planArgs) register(fs *flag.FlagSet) {
	a.cf.register(fs)
	a.pf.register(fs)
	fs.BoolVar(&a.json, "json", false, "print the plan as JSON")
	fs.BoolVar(&a.describe, "describe", false, "print, in plain sentences, what a program in this sandbox can and cannot do here (for an AI agent's tool description)")
	fs.Func("timeout", "with --describe: the time limit the program will run under (`D`, e.g. 30s, 5m)", durationFlag(&a.timeout, false))
	fs.StringVar(&a.platform, "platform", "", "the plan on `OS` (linux, darwin or windows; default: this machine's), computed here as data; darwin adds the Seatbelt profile")
	fs.StringVar(&a.entry, "entry", entryWrap, "the plan of the entry point `ENTRY`: wrap (WrapCommand, Run, sandbox run) or applyself (ApplySelf)")
}

// check refuses what plan's flags cannot mean together, and returns the
// Scope of --entry.
func (a *planArgs) check() (string, error) {
	if err := a.pf.check(); err != nil {
		return "", err
	}
	if a.platform == "" {
		a.platform = runtime.GOOS
	}
	scope, err := entryScope(a.entry)
	switch {
	case err != nil:
		return "", err
	case a.describe && a.json:
		return "", errors.New("--describe and --json exclude each other")
	case a.timeout != 0 && !a.describe:
		return "", errors.New("--timeout is only for --describe")
	case a.platform == "darwin" && scope == sandbox.ScopeApplySelf:
		return "", errors.New("--entry applyself with --platform darwin: ApplySelf is not available on macOS (Seatbelt confines only a process sandbox-exec starts)")
	}
	return scope, nil
}

func section(w io.Writer, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\n"+title)
	for _, l := range lines {
		fmt.Fprintln(w, "  "+wrap(l, 76, "    "))
	}
}
