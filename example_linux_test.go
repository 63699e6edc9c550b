package sandbox_test

// Runnable examples of the Engine's side and of Run: they confine
// /bin/sh, so their Output holds on Linux with the sandbox available (the
// kernel matrix's guest without Landlock skips them: there WrapCommand
// and Run refuse, as they must).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/openparallax/sandbox"
)

// The Engine's side: WrapCommand prepares the command so that it starts
// confined, the Engine runs it, FinishCommand ends what WrapCommand set up
// beside it and reports what the program left behind, and
// ReadCanaryResult reads the Agent's proof, which /bin/sh did not write.
func ExampleFinishCommand_engine() {
	workspace, err := os.MkdirTemp("", "example-workspace-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(workspace)
	cfg := sandbox.Config{AllowedWritePaths: []string{workspace}}
	cmd := exec.Command("/bin/sh", "-c", "echo hello")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		fmt.Println("cannot confine:", err) // ErrUnavailable, ErrNotEnforced, *ConfigError
		return
	}
	runErr := cmd.Run()
	report, err := sandbox.FinishCommand(cmd) // after every command WrapCommand prepared
	fmt.Println(runErr, err, len(report.GitCreated), len(report.Findings))
	fmt.Println(strings.TrimSpace(out.String()))
	fmt.Println(sandbox.ReadCanaryResult(workspace).Status) // an Engine refuses all but "sandboxed"
	// Output:
	// <nil> <nil> 0 0
	// hello
	// unknown
}

// Run starts a program confined, with limits on its whole tree, waits for
// it and returns its exit code and output. PlanFor says how each limit is
// enforced here; RunResult.LimitExceeded names the one that ended it.
func ExampleRun_limits() {
	cfg := sandbox.Config{
		Limits: sandbox.Limits{Processes: 64, MemoryBytes: 512 << 20, CPUTime: 30 * time.Second, FileSizeBytes: 64 << 20},
	}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", "echo hello"},
		sandbox.RunOptions{Timeout: time.Minute})
	switch {
	case err != nil:
		fmt.Println("not run, or ended by the timeout:", err)
	case res.LimitExceeded != "":
		fmt.Println("ended by a limit:", res.LimitExceeded)
	default:
		fmt.Printf("exit %d: %s\n", res.ExitCode, strings.TrimSpace(string(res.Stdout)))
	}
	// Output: exit 0: hello
}
