package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/openparallax/sandbox"
)

// planReport is plan's --json output.
type planReport struct {
	Plan     sandbox.Plan   `json:"plan"`
	Seatbelt seatbeltReport `json:"seatbelt"`
}

type seatbeltReport struct {
	Profile string   `json:"profile,omitempty"`
	Params  []string `json:"params,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// plan prints what a Config would be on this machine, and its macOS
// Seatbelt profile (rendered on any OS).
func plan(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", stderr)
	var a planArgs
	a.register(fs)
	asJSON, describe, timeLimit := &a.json, &a.describe, &a.timeout
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "plan", "unexpected argument %q", fs.Arg(0))
	}
	if err := a.pf.check(); err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	cfg, err := a.cf.config()
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		return usageError(stderr, "plan", "%v", configFlagError(err, nil))
	}
	if *describe {
		if *asJSON {
			return usageError(stderr, "plan", "--describe and --json exclude each other")
		}
		p.TimeLimit = *timeLimit
		fmt.Fprint(stdout, p.Describe())
		return exitOK
	}
	if *timeLimit != 0 {
		return usageError(stderr, "plan", "--timeout is only for --describe")
	}
	rep := planReport{Plan: p}
	if text, params, err := sandbox.SeatbeltProfile(cfg); err != nil {
		rep.Seatbelt.Error = err.Error()
	} else {
		rep.Seatbelt.Profile, rep.Seatbelt.Params = text, params
	}
	if *asJSON {
		printJSON(stdout, rep)
		return exitOK
	}
	on := colour(stdout)
	avail := "available"
	if !p.Available {
		avail = "UNAVAILABLE: " + p.Reason
	}
	ver := ""
	if p.Version > 0 {
		ver = fmt.Sprintf(" ABI %d", p.Version)
	}
	fmt.Fprintf(stdout, "Plan on %s: %s%s (%s)\n\n", p.Platform, p.Mechanism, ver, avail)
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
		section(stdout, "Egress by host name (WrapCommand, Run, sandbox run):", []string{line})
	}
	section(stdout, "Syscall filter:", p.Syscalls)
	section(stdout, "Default paths absent here:", p.Skipped)
	section(stdout, "Mount layer (WrapCommand, Run, sandbox run; in a new mount namespace):", p.MountLayer)
	if p.ChildHalf != "" {
		section(stdout, "Spawning (WrapCommand, Run, sandbox run):", []string{p.ChildHalf})
	}
	fmt.Fprintln(stdout, "\nmacOS Seatbelt profile (sandbox-exec -p PROFILE -D NAME=VALUE ...):")
	if rep.Seatbelt.Error != "" {
		fmt.Fprintf(stdout, "  not generated: %s\n", rep.Seatbelt.Error)
		return exitOK
	}
	for _, prm := range rep.Seatbelt.Params {
		fmt.Fprintf(stdout, "  -D %s\n", prm)
	}
	fmt.Fprintln(stdout, "  "+strings.ReplaceAll(strings.TrimRight(rep.Seatbelt.Profile, "\n"), "\n", "\n  "))
	return exitOK
}

// planArgs are plan's flags: the Config's, the program's (checked only),
// and plan's own.
type planArgs struct {
	cf             configFlags
	pf             progFlags
	json, describe bool
	timeout        time.Duration
}

func (a *planArgs) register(fs *flag.FlagSet) {
	a.cf.register(fs)
	a.pf.register(fs)
	fs.BoolVar(&a.json, "json", false, "print the plan as JSON")
	fs.BoolVar(&a.describe, "describe", false, "print, in plain sentences, what a program in this sandbox can and cannot do here (for an AI agent's tool description)")
	fs.Func("timeout", "with --describe: the time limit the program will run under (`D`, e.g. 30s, 5m)", durationFlag(&a.timeout, false))
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
