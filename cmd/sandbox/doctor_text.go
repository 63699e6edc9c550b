package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/openparallax/sandbox"
)

// doctorPlanPort is the TCP port of the Config doctor plans (its canary
// connects to a listener's port, which changes from run to run).
const doctorPlanPort = 443

// doctorArgs are doctor's flags.
type doctorArgs struct {
	json  bool
	entry string
}

func (a *doctorArgs) register(fs *flag.FlagSet) {
	fs.BoolVar(&a.json, "json", false, "print the report as JSON")
	fs.StringVar(&a.entry, "entry", "", "show only the entry point `ENTRY`: wrap (WrapCommand, Run, sandbox run) or applyself (ApplySelf); default both")
}

// printCapabilities prints the plan's features for the entry points in
// scopes. With one, its features; with both, first those that hold for
// both, then under each entry point's heading those that are its own
// (an entry with that Scope), so that no feature is listed twice for the
// same entry point and every line says which entry point it is about.
// The temporary workspace is printed as <workspace>.
func printCapabilities(w io.Writer, on bool, features []sandbox.Enforcement, scopes []string, workspace string) {
	cfgLine := "a workspace, connect to *:" + strconv.Itoa(doctorPlanPort) + ", bind 8080"
	print := func(scope string) {
		for _, f := range features {
			if f.Scope == scope {
				featureLine(w, on, f.Feature, f.Enforced, strings.ReplaceAll(f.Detail, workspace, "<workspace>"), f.Hint)
			}
		}
	}
	fmt.Fprintln(w)
	if len(scopes) == 1 {
		fmt.Fprintf(w, "Capabilities of %s (%s):\n", entryTitle(scopes[0]), cfgLine)
		print("")
		print(scopes[0])
		return
	}
	fmt.Fprintf(w, "Capabilities (%s), of every entry point:\n", cfgLine)
	print("")
	for _, scope := range scopes {
		fmt.Fprintf(w, "\nOf %s alone:\n", entryTitle(scope))
		print(scope)
	}
}

// printEgress prints how WrapCommand and Run enforce host names here.
func printEgress(w io.Writer, e *sandbox.EgressPlan) {
	egress := "not enforced by WrapCommand and Run on " + runtime.GOOS + " (see tcp_connect_host in the plan of a Config naming hosts)"
	switch {
	case e == nil:
	case e.Mode == sandbox.EgressTransparent:
		egress = e.Mode + ": a network namespace with only loopback, every address local; the caller relays direct connections to allowed hosts, answers DNS for them, and serves the proxy at " + e.Proxy + ". Clients: " + e.Clients
	case e.Mode == sandbox.EgressProxy:
		egress = e.Mode + ": a network namespace with only loopback, and the proxy at " + e.Proxy + " in it, served by the caller. Clients: " + e.Clients
	default:
		egress = e.Mode + ": " + e.Reason
	}
	fmt.Fprintln(w, "\nEgress by host name (WrapCommand, Run):\n  "+wrap(egress, 74, "  "))
}

// canaryNames are the parts of a canary's text that change from run to
// run though nothing about the sandbox did: its temporary files' names
// (pid and a random number), its parent's pid, and how many threads the
// Go runtime had started when the threads probe counted them (the probe's
// verdict, every thread filtered, is what it reports).
// Compiled on first use (lazyRE), not at every command's start.
var canaryNames = []struct {
	re   func() *regexp.Regexp
	with string
}{
	{lazyRE(`\.sandbox-canary-[0-9]+-[0-9]+`), ".sandbox-canary-<pid>-<random>"},
	{lazyRE(`ppid [0-9]+`), "ppid <ppid>"},
	{lazyRE(`^[0-9]+ threads, each`), "<n> threads, each"},
}

// stableCanary is r as doctor prints it: the temporary workspace as
// <workspace>, the listener's port as <port>, and canaryNames replaced,
// so that two runs on the same machine print the same text. The JSON
// report keeps the values.
func stableCanary(r sandbox.CanaryResult, workspace string, port int) sandbox.CanaryResult {
	stable := func(s string) string {
		s = strings.ReplaceAll(s, workspace, "<workspace>")
		s = strings.ReplaceAll(s, ":"+strconv.Itoa(port), ":<port>")
		for _, n := range canaryNames {
			s = n.re().ReplaceAllString(s, n.with)
		}
		return s
	}
	probes := make([]sandbox.ProbeResult, len(r.Probes))
	for i, p := range r.Probes {
		p.Target, p.Error = stable(p.Target), stable(p.Error)
		probes[i] = p
	}
	r.Probes = probes
	return r
}

// printDoctor is doctor's text: the machine, the capabilities of the
// entry points in scopes, egress (WrapCommand's), and the canary, with the
// temporary workspace and the canary's port as <workspace> and <port>.
func printDoctor(w io.Writer, rep doctorReport, scopes []string, workspace string, port int) {
	on := colour(w)
	mech := rep.Status.Mode
	if rep.Status.Version > 0 {
		mech = fmt.Sprintf("%s ABI %d", rep.Status.Mode, rep.Status.Version)
	}
	state := paint(on, "32", "active")
	if !rep.Status.Active {
		state = paint(on, "31;1", "UNAVAILABLE")
	}
	fmt.Fprintf(w, "Platform:   %s\n", rep.Platform)
	fmt.Fprintf(w, "Sandbox:    %s (%s)\n", mech, state)
	fmt.Fprintf(w, "Filesystem: %s\n", yesNo(rep.Status.Filesystem))
	fmt.Fprintf(w, "Network:    %s\n", yesNo(rep.Status.Network))
	if rep.Status.Reason != "" {
		fmt.Fprintf(w, "Reason:     %s\n", wrap(rep.Status.Reason, 68, "            "))
	}
	if m := rep.MountLayer; m != nil {
		line := paint(on, "32", "available") + " to WrapCommand, Run and sandbox run (deny paths, mounts, git protection, private /tmp)"
		if !m.Enforced {
			line = paint(on, "31;1", "UNAVAILABLE") + ": " + strings.TrimPrefix(m.Detail, "WrapCommand/Run: not enforced: ")
			if m.Hint != "" {
				line += " (remedy: " + m.Hint + ")"
			}
		}
		fmt.Fprintf(w, "Mounts:     %s\n", wrap(line, 68, "            "))
	}
	printCapabilities(w, on, rep.Features, scopes, workspace)
	if slices.Contains(scopes, sandbox.ScopeCommand) {
		printEgress(w, rep.Egress)
	}
	fmt.Fprintln(w)
	switch {
	case rep.Canary != nil:
		fmt.Fprintln(w, "Canary (in a child sandbox.Run starts, temporary workspace):")
		printProbes(w, on, stableCanary(*rep.Canary, workspace, port))
	case rep.CanaryError != "":
		fmt.Fprintf(w, "Canary: could not run: %s\n", rep.CanaryError)
	default:
		fmt.Fprintln(w, "Canary: not run: no sandbox mechanism here")
	}
}
