package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openparallax/sandbox"
)

// doctorReport is doctor's --json output.
type doctorReport struct {
	Platform string                `json:"platform"`
	Status   sandbox.Status        `json:"status"`
	Features []sandbox.Enforcement `json:"features"`
	// Canary is the canary run in a sandboxed child; absent when the
	// mechanism is unavailable.
	Canary *sandbox.CanaryResult `json:"canary,omitempty"`
	// CanaryError says why the canary could not run.
	CanaryError string `json:"canary_error,omitempty"`
	// MountLayer says (Linux) whether WrapCommand and Run can use the
	// mount-namespace layer here (deny paths, mounts, git protection,
	// private /tmp), and if not why and the remedy.
	MountLayer *sandbox.Enforcement `json:"mount_layer,omitempty"`
	// Egress says how WrapCommand and Run enforce host names in
	// AllowedTCPConnect here (asked with one host entry).
	Egress *sandbox.EgressPlan `json:"egress,omitempty"`
}

// machineGaps are the features of doctor's plan that are not enforced
// because of this machine: all those not enforced, less WrapCommand's and
// Run's file_metadata where the mount layer is available (mountLayer
// enforced). That one is not enforced only because doctor's Config needs
// no mount layer; any Config that uses the layer here (Strict, a deny
// path, a git repository in a write path) has it enforced. doctor still
// prints it as not enforced for its Config, with the remedy; the exit code
// says whether the machine is degraded.
func machineGaps(fs []sandbox.Enforcement, mountLayer *sandbox.Enforcement) []sandbox.Enforcement {
	var out []sandbox.Enforcement
	for _, f := range fs {
		if f.Enforced || f.Feature == sandbox.FeatureMetadata && f.Scope == sandbox.ScopeCommand && mountLayer != nil && mountLayer.Enforced {
			continue
		}
		out = append(out, f)
	}
	return out
}

// doctorConfig is what doctor asks about and runs its canary under: an
// agent with a workspace, one TCP port to connect to (any host) and one to
// bind, so that every capability has something to enforce.
func doctorConfig(workspace string, connectPort int) sandbox.Config {
	return sandbox.Config{
		AllowedWritePaths: []string{workspace},
		AllowedTCPConnect: []string{"*:" + strconv.Itoa(connectPort)},
		AllowedTCPBind:    []uint16{8080},
	}
}

func doctor(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("doctor", stderr)
	var a doctorArgs
	a.register(fs)
	asJSON := &a.json
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "doctor", "unexpected argument %q", fs.Arg(0))
	}
	scopes := []string{sandbox.ScopeCommand, sandbox.ScopeApplySelf}
	if a.entry != "" {
		scope, err := entryScope(a.entry)
		if err != nil {
			return usageError(stderr, "doctor", "%v", err)
		}
		scopes = []string{scope}
	}

	workspace, err := os.MkdirTemp("", "sandbox-doctor-")
	if err != nil {
		fmt.Fprintln(stderr, "sandbox doctor:", err)
		return exitUnavailable
	}
	defer os.RemoveAll(workspace)
	if r, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = r // macOS: /var → /private/var, which the sandbox can match
	}
	// A listener for the canary's positive control on a granted port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, "sandbox doctor:", err)
		return exitUnavailable
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := doctorConfig(workspace, port)

	st := sandbox.Probe()
	// The plan is of the same Config with a fixed port (the canary's is
	// the listener's, which changes from run to run), so that doctor says
	// the same thing twice on the same machine.
	plan, err := sandbox.PlanFor(doctorConfig(workspace, doctorPlanPort))
	if err != nil {
		fmt.Fprintln(stderr, "sandbox doctor:", err)
		return exitUnavailable
	}
	if len(scopes) == 1 {
		plan = plan.For(scopes[0])
	}
	rep := doctorReport{Platform: runtime.GOOS + "/" + runtime.GOARCH, Status: st, Features: plan.Features}
	if runtime.GOOS == "linux" && slices.Contains(scopes, sandbox.ScopeCommand) {
		// A deny-read path makes the plan evaluate the layer (and probe
		// the namespaces once).
		lp, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{workspace}, DenyReadPaths: []string{workspace}})
		if err == nil {
			for _, f := range lp.Features {
				if f.Feature == sandbox.FeatureDenyRead && f.Scope == sandbox.ScopeCommand {
					rep.MountLayer = &f
				}
			}
		}
	}
	if hp, err := sandbox.PlanFor(sandbox.Config{AllowedTCPConnect: []string{"example.com:443"}}); err == nil && slices.Contains(scopes, sandbox.ScopeCommand) {
		rep.Egress = hp.Egress
	}
	if st.Active {
		if r, err := canaryInChild(cfg); err != nil {
			rep.CanaryError = err.Error()
		} else {
			rep.Canary = &r
		}
	}

	code := exitOK
	switch {
	case !st.Active:
		code = exitUnavailable
	case rep.Canary == nil || !rep.Canary.Verified:
		code = exitNotVerified
	case len(machineGaps(plan.Features, rep.MountLayer)) > 0:
		code = exitDegraded
	}
	if *asJSON {
		printJSON(stdout, rep)
		return code
	}
	printDoctor(stdout, rep, scopes, workspace, port)
	return code
}

func printProbes(w io.Writer, on bool, r sandbox.CanaryResult) {
	for _, p := range r.Probes {
		status := p.Status
		switch p.Status {
		case sandbox.ProbeBlocked, sandbox.ProbeAllowed:
			status = paint(on, "32", fmt.Sprintf("%-8s", p.Status))
		case sandbox.ProbeFailed:
			status = paint(on, "31;1", fmt.Sprintf("%-8s", p.Status))
		default:
			status = fmt.Sprintf("%-8s", p.Status)
		}
		// The error names the target already when there is one.
		detail := p.Error
		if detail == "" {
			detail = p.Target
		} else if p.Target != "" && !strings.Contains(detail, p.Target) {
			detail = p.Target + ": " + detail
		}
		fmt.Fprintf(w, "  %-15s %s %s\n", p.Name, status, wrap(detail, 80-27, "                           "))
	}
	fmt.Fprintln(w, r.Summary)
}

// canaryChild is the hidden command the canary runs as, confined.
const canaryChild = "__canary"

// canaryInChild starts this program again, confined to cfg through
// sandbox.Run, to run the canary there; the child prints its result as JSON.
func canaryInChild(cfg sandbox.Config) (sandbox.CanaryResult, error) {
	self, err := os.Executable()
	if err != nil {
		return sandbox.CanaryResult{}, err
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return sandbox.CanaryResult{}, err
	}
	res, err := sandbox.Run(context.Background(), cfg, self, []string{canaryChild, string(cfgJSON)},
		sandbox.RunOptions{Timeout: 20 * time.Second})
	if err != nil {
		return sandbox.CanaryResult{}, fmt.Errorf("%v (stderr: %s)", err, res.Stderr)
	}
	var r sandbox.CanaryResult
	if err := json.Unmarshal(res.Stdout, &r); err != nil {
		return sandbox.CanaryResult{}, fmt.Errorf("canary child (%s) printed no result: %v (stderr: %s)", res.State, err, res.Stderr)
	}
	return r, nil
}

// canaryChildMain runs in the confined child: the canary for the Config
// given as JSON, printed as JSON.
func canaryChildMain(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "sandbox: internal command, not for use")
		return exitUsage
	}
	var cfg sandbox.Config
	if err := json.Unmarshal([]byte(args[0]), &cfg); err != nil {
		fmt.Fprintln(stderr, "sandbox:", err)
		return exitUsage
	}
	printJSON(stdout, sandbox.VerifyCanaryFor(cfg))
	return exitOK
}
