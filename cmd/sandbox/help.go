package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
)

// flagGroup is a heading of the help and the flags under it, in order.
type flagGroup struct {
	title string
	names []string
}

// configGroups are the flags that make the Config (plan, verify and run
// take them all), then the program's flags, which plan and verify accept
// so that a run's command line can be checked as it is.
var configGroups = []flagGroup{
	{"Files", []string{"ro", "rw", "exec", "allow-exec-rw", "deny-write", "deny-read", "mount", "private-root", "no-git-protection"}},
	{"Network", []string{"connect", "bind", "allow-udp", "allow-unix", "no-tls-trust-service"}},
	{"Processes and devices", []string{"allow-spawn", "allow-chown", "allow-sysv-ipc", "allow-shm", "allow-camera", "allow-microphone"}},
	{"Limits", []string{"max-procs", "max-memory", "max-cpu", "max-file-size", "max-open-files"}},
	{"The Config as a whole", []string{"config", "strict", "strict-accept-loader"}},
	{"The program (run uses them; plan and verify check them)", []string{"env", "keep-env", "cwd", "go-cache"}},
}

// commandGroups are each command's own flags.
var commandGroups = map[string]flagGroup{
	"run":    {"run", []string{"timeout", "tty", "explain", "request"}},
	"plan":   {"plan", []string{"json", "describe", "timeout", "platform", "entry"}},
	"verify": {"verify", []string{"workspace", "json"}},
	"doctor": {"doctor", []string{"json", "entry"}},
	"schema": {"schema", []string{"request"}},
}

// commandFlags returns the FlagSet of a command with every flag it takes
// (the help and its test read it).
func commandFlags(name string) *flag.FlagSet {
	fs := newFlagSet(name, io.Discard)
	switch name {
	case "run":
		new(runArgs).register(fs, false)
	case "plan":
		new(planArgs).register(fs)
	case "verify":
		new(verifyArgs).register(fs)
	case "doctor":
		new(doctorArgs).register(fs)
	case "schema":
		new(schemaArgs).register(fs)
	}
	return fs
}

// printGroups prints the flags of fs under their headings: the Config's
// groups when fs has them, then the command's own; a flag in no group
// (a test keeps there from being any) is printed last, under "Other".
func printGroups(w io.Writer, fs *flag.FlagSet, withConfig bool) {
	seen := map[string]bool{}
	groups := []flagGroup{commandGroups[fs.Name()]}
	if withConfig {
		groups = append(slices.Clone(configGroups), groups...)
	}
	var rest []string
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.ContainsFunc(groups, func(g flagGroup) bool { return slices.Contains(g.names, f.Name) }) {
			rest = append(rest, f.Name)
		}
	})
	groups = append(groups, flagGroup{"Other", rest})
	for _, g := range groups {
		var lines []string
		for _, n := range g.names {
			if f := fs.Lookup(n); f != nil && !seen[n] {
				seen[n] = true
				lines = append(lines, flagLine(f))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "\n%s:\n%s", g.title, strings.Join(lines, ""))
		}
	}
}

// flagLine is one flag of the help: --name ARG, then its usage, indented.
func flagLine(f *flag.Flag) string {
	arg, usage := flag.UnquoteUsage(f)
	head := "  --" + f.Name
	if arg != "" {
		head += " " + arg
	}
	if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "[]" {
		usage += " (default " + d + ")"
	}
	return head + "\n        " + wrap(usage, 70, "        ") + "\n"
}

// help is `sandbox --help`: the usage, then every flag of plan, verify and
// run grouped, then each command's own.
func help(w io.Writer) {
	fmt.Fprintln(w, usage)
	fmt.Fprint(w, "\nConfig flags: run, verify and plan take them all; each sets a field\nof the Config (sandbox schema describes the fields).\n")
	all := commandFlags("run")
	for _, g := range configGroups {
		var lines []string
		for _, n := range g.names {
			if f := all.Lookup(n); f != nil {
				lines = append(lines, flagLine(f))
			}
		}
		fmt.Fprintf(w, "\n%s:\n%s", g.title, strings.Join(lines, ""))
	}
	for _, name := range []string{"run", "plan", "verify", "doctor", "schema"} {
		fs := commandFlags(name)
		g := commandGroups[name]
		fmt.Fprintf(w, "\nsandbox %s's own flags:\n", name)
		for _, n := range g.names {
			if f := fs.Lookup(n); f != nil {
				fmt.Fprint(w, flagLine(f))
			}
		}
	}
}

// version is `sandbox --version`: the module version this binary was built
// from (runtime/debug.ReadBuildInfo), with the commit when the build
// recorded one. "(devel)" is what Go records for a build from a source
// tree without version control information: the line then says so.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "sandbox: no build information in this binary"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	line := "sandbox " + v
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if v == "(devel)" {
		line += " (built from a source checkout, not a released module version)"
	}
	if rev != "" {
		line += " (commit " + rev[:min(12, len(rev))] + dirty + ")"
	}
	return line + " " + bi.GoVersion
}
