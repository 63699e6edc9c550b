package sandbox_test

// Examples for the seeds' three callers, compiled on every OS. Their
// results depend on the machine (what it enforces, its files), so none
// states an Output; the Agent's confines the process that runs it, so it
// is compile-only by design (a test binary must not confine itself).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/openparallax/sandbox"
)

// The Agent confines itself before it reads any input, proves it, and
// leaves the proof where its Engine reads it.
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

// Run a build tool with bounded resources: the whole tree's tasks, memory
// and CPU time where a cgroup can be used (PlanFor says which limit is
// enforced how), and RunResult.LimitExceeded names the one that ended it.
func ExampleRun_limits() {
	workspace := os.TempDir()
	cfg := sandbox.Config{
		AllowedWritePaths: []string{workspace},
		AllowedExecPaths:  []string{"/usr/bin", "/bin"},
		AllowProcessSpawn: true,
		Limits:            sandbox.Limits{Processes: 64, MemoryBytes: 512 << 20, CPUTime: 30 * time.Second, FileSizeBytes: 64 << 20},
	}
	res, err := sandbox.Run(context.Background(), cfg, "/usr/bin/make", []string{"-C", workspace},
		sandbox.RunOptions{Dir: workspace, Timeout: time.Minute})
	switch {
	case err != nil:
		fmt.Println("not run, or ended by the timeout:", err)
	case res.LimitExceeded != "":
		fmt.Println("ended by a limit:", res.LimitExceeded)
	default:
		fmt.Printf("exit %d\n%s", res.ExitCode, res.Stdout)
	}
}
