// Command engine is an example Engine: it starts an Agent, waits for it,
// and refuses to trust it unless the Agent's canary result says its sandbox
// was verified.
//
//	go run ./examples/engine [-agent PATH] [-- AGENT-ARGS...]
//
// Without -agent it builds ./examples/agent first (a convenience for the
// demo; a real Engine ships its Agent).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/openparallax/sandbox"
)

func main() {
	agent := flag.String("agent", "", "the Agent binary (default: build ./examples/agent)")
	flag.Parse()
	workspace, err := os.MkdirTemp("", "engine-workspace-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(workspace)
	if *agent == "" {
		*agent = filepath.Join(workspace, "..", filepath.Base(workspace)+"-agent")
		build := exec.Command("go", "build", "-o", *agent, "./examples/agent")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fail(fmt.Errorf("building the agent: %w", err))
		}
		defer os.Remove(*agent)
	}

	cmd := exec.Command(*agent, append([]string{"-workspace", workspace}, flag.Args()...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	runErr := cmd.Run()

	result := sandbox.ReadCanaryResult(workspace)
	if !result.Verified {
		fmt.Fprintf(os.Stderr, "engine: refusing the agent: its sandbox is not verified (status %s): %s\n", result.Status, result.Summary)
		os.Exit(1)
	}
	if runErr != nil {
		fail(fmt.Errorf("agent: %w", runErr))
	}
	fmt.Printf("engine: agent verified (%s): %s\n", result.Mechanism, result.Summary)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "engine:", err)
	os.Exit(1)
}
