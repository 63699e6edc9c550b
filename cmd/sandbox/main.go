// Command sandbox tells an operator what this machine's sandbox can enforce.
//
//	sandbox doctor [--json]
//
// doctor prints the platform's mechanism, the Landlock ABI on Linux, and one
// line per capability, enforced or not, with the reason and a remedy for
// each one that is not. It exits 0 when the mechanism is active, 3 when it is
// active but some capability is not enforced here, 4 when it is unavailable,
// and 2 on a usage error.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/openparallax/sandbox"
)

// Exit codes.
const (
	exitOK          = 0
	exitUsage       = 2
	exitDegraded    = 3
	exitUnavailable = 4
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: sandbox doctor [--json]")
		return exitUsage
	}
	switch args[0] {
	case "doctor":
		return doctor(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: sandbox doctor [--json]")
		return exitOK
	default:
		fmt.Fprintf(stderr, "sandbox: unknown command %q (want doctor)\n", args[0])
		return exitUsage
	}
}

// doctorReport is doctor's --json output.
type doctorReport struct {
	Platform string                `json:"platform"`
	Status   sandbox.Status        `json:"status"`
	Features []sandbox.Enforcement `json:"features"`
}

// doctorConfig is what doctor asks about: an agent with a workspace, a TCP
// port and a bind port, so that every capability has something to enforce.
func doctorConfig() sandbox.Config {
	return sandbox.Config{
		AllowedWritePaths: []string{os.TempDir()},
		AllowedTCPConnect: []string{"*:443"},
		AllowedTCPBind:    []uint16{8080},
	}
}

func doctor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sandbox doctor: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	st := sandbox.Probe()
	plan, err := sandbox.PlanFor(doctorConfig())
	if err != nil {
		fmt.Fprintf(stderr, "sandbox doctor: %v\n", err)
		return exitUnavailable
	}
	rep := doctorReport{Platform: runtime.GOOS + "/" + runtime.GOARCH, Status: st, Features: plan.Features}
	code := exitOK
	switch {
	case !st.Active:
		code = exitUnavailable
	case len(plan.NotEnforced()) > 0:
		code = exitDegraded
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return code
	}
	mech := st.Mode
	if st.Version > 0 {
		mech = fmt.Sprintf("%s ABI %d", st.Mode, st.Version)
	}
	state := "active"
	if !st.Active {
		state = "UNAVAILABLE"
	}
	fmt.Fprintf(stdout, "Platform:   %s\n", rep.Platform)
	fmt.Fprintf(stdout, "Sandbox:    %s (%s)\n", mech, state)
	fmt.Fprintf(stdout, "Filesystem: %s\n", yesNo(st.Filesystem))
	fmt.Fprintf(stdout, "Network:    %s\n", yesNo(st.Network))
	if st.Reason != "" {
		fmt.Fprintf(stdout, "Reason:     %s\n", st.Reason)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "Capability (for a workspace, TCP connect *:443, bind 8080):")
	for _, f := range plan.Features {
		mark := "enforced    "
		if !f.Enforced {
			mark = "NOT enforced"
		}
		fmt.Fprintf(stdout, "  %-20s %s  %s\n", f.Feature, mark, f.Detail)
		if f.Hint != "" {
			fmt.Fprintf(stdout, "  %-20s %s  hint: %s\n", "", "            ", f.Hint)
		}
	}
	return code
}

func yesNo(b bool) string {
	if b {
		return "enforced"
	}
	return "not enforced"
}
