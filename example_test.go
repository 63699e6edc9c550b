package sandbox_test

// Examples for the seeds' three callers, compiled on every OS. Those
// whose result is the same on every machine state an Output and run as
// tests (ReadCanaryResult, a refused Config); those whose result depends
// on the machine (what it enforces, its files) are compile-only, each
// saying why. The Agent's confines the process that runs it, so it is
// compile-only by design: a test binary must not confine itself, and
// re-executing it as a child would show the mechanism, not the Agent.
// The Engine's and Run's runnable examples confine /bin/sh, which holds
// only on Linux: they are in example_linux_test.go.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/openparallax/sandbox"
)

// The Agent confines itself before it reads any input, proves it, and
// leaves the proof where its Engine reads it. Compile-only: it would
// confine the test binary that runs it.
func ExampleSandbox_ApplySelf() {
	workspace := "/srv/agent/workspace"
	cfg := sandbox.Config{
		AllowedReadPaths:  []string{"/usr/share/agent"},
		AllowedWritePaths: []string{workspace},
		AllowedTCPConnect: []string{"127.0.0.1:50051"},
	}
	if err := sandbox.New().ApplySelf(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "not confined:", err) // ErrUnavailable, ErrNotEnforced, *ConfigError
		os.Exit(1)
	}
	r := sandbox.VerifyCanary() // probes against the Config just applied
	r.Nonce = os.Getenv(sandbox.CanaryNonceEnv)
	if err := sandbox.WriteCanaryResult(workspace, r); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	fmt.Println(r.Summary) // "Sandbox verified: ..." only when every applicable probe was blocked
}

// The Engine starts its Agent confined from the first instruction, hands
// it its Config and a nonce, and trusts it only with a fresh, verified
// canary result; after the Agent exits it finishes the command.
// Compile-only: it needs an Agent program (examples/agent). A runnable
// one, with /bin/sh as the program, is ExampleSandbox_WrapCommand (Linux).
func ExampleFinishCommand() {
	workspace := "/srv/agent/workspace"
	cfg := sandbox.Config{AllowedWritePaths: []string{workspace}, AllowedTCPConnect: []string{"127.0.0.1:50051"}}
	js, _ := json.Marshal(cfg)
	nonce := sandbox.NewCanaryNonce()
	cmd := exec.Command("/usr/local/bin/agent")
	cmd.Env = []string{"SANDBOX_CONFIG=" + string(js), sandbox.CanaryNonceEnv + "=" + nonce}
	sb := sandbox.New()
	if err := sb.WrapCommand(cmd, cfg); err != nil {
		fmt.Println("cannot confine:", err) // cmd.Start would fail too
		return
	}
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return
	}
	if ps, ok := sb.(sandbox.PostStarter); ok { // Windows: assign, then resume
		if err := ps.PostStart(cmd.Process.Pid); err != nil {
			fmt.Println(err)
			return
		}
		defer ps.Close()
	}
	// ... once the Agent has written its result:
	if r := sandbox.ReadFreshCanaryResult(workspace, nonce, time.Minute); !r.Verified {
		fmt.Println("refusing an unverified agent:", r.Summary)
	}
	waitErr := cmd.Wait()
	report, err := sandbox.FinishCommand(cmd)
	fmt.Println(waitErr, err, report.LimitExceeded, len(report.DeniedRequests), report.GitCreated, report.Findings)
}

// doctor says what this machine can enforce, before anything is applied.
// Compile-only: what is enforced is this machine's answer.
func ExamplePlanFor() {
	fmt.Printf("%+v\n", sandbox.Probe())
	plan, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{os.TempDir()}, AllowedTCPConnect: []string{"api.example.com:443"}})
	if err != nil {
		fmt.Println(err) // *ConfigError: the field and the value
		return
	}
	for _, f := range plan.NotEnforced() {
		fmt.Printf("not enforced: %s: %s (remedy: %s)\n", f.Feature, f.Detail, f.Hint)
	}
	fmt.Print(plan.Describe()) // what the program can and cannot do, for an agent to read
}

// A Config that cannot be applied anywhere is refused before anything is
// planned or applied, with the field and the value: a relative path would
// be relative to whatever directory the program later runs in.
func ExamplePlanFor_refused() {
	_, err := sandbox.PlanFor(sandbox.Config{AllowedReadPaths: []string{"data/input"}})
	var ce *sandbox.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Field, ce.Value, errors.Is(err, sandbox.ErrInvalidConfig))
	}
	// Output: allowed_read_paths data/input true
}

// The Engine reads the Agent's canary result from the workspace; a
// workspace where no Agent wrote one reads as "unknown", never as
// verified.
func ExampleReadCanaryResult() {
	workspace, err := os.MkdirTemp("", "example-workspace-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(workspace)
	r := sandbox.ReadCanaryResult(workspace)
	fmt.Println(r.Status, r.Verified)
	// Output: unknown false
}
