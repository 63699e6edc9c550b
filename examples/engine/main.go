// Command engine is an example Engine: it starts an Agent already confined
// to its workspace (WrapCommand, then PostStart where the platform needs
// it), waits for it, and refuses to trust it unless the Agent's canary
// result says its sandbox was verified.
//
//	go run ./examples/engine [-agent PATH] [-unconfined] [-- AGENT-ARGS...]
//
// Without -agent it builds ./examples/agent first (a convenience for the
// demo; a real Engine ships its Agent). -unconfined starts the Agent
// without WrapCommand: together with the Agent's -skip-sandbox it shows the
// Engine refusing an Agent whose sandbox is not verified.
//
// The Engine hands the Agent a fresh nonce in OPENPARALLAX_CANARY_NONCE and
// the Config it confines it with, as JSON, in SANDBOX_CONFIG (so that the
// Agent's canary probes what this Config denies and checks what it grants).
// It accepts the Agent's result only with that nonce and at most a minute
// old: an old result, or one another run left in the workspace, is refused.
// This does not stop an unconfined program that can write the workspace
// from forging a result (see the sandbox package's notes on the canary).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/openparallax/sandbox"
)

func main() {
	agent := flag.String("agent", "", "the Agent binary (default: build ./examples/agent)")
	unconfined := flag.Bool("unconfined", false, "start the Agent without WrapCommand (demo of a refusal)")
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

	cfg := sandbox.Config{AllowedWritePaths: []string{workspace}}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		fail(err)
	}
	nonce := sandbox.NewCanaryNonce()
	cmd := exec.Command(*agent, append([]string{"-workspace", workspace}, flag.Args()...)...)
	cmd.Env = append(os.Environ(), sandbox.CanaryNonceEnv+"="+nonce, "SANDBOX_CONFIG="+string(cfgJSON))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	sb := sandbox.New()
	if !*unconfined {
		if err := sb.WrapCommand(cmd, cfg); err != nil {
			fail(fmt.Errorf("confining the agent: %w", err))
		}
	}
	if err := cmd.Start(); err != nil {
		fail(fmt.Errorf("starting the agent: %w", err))
	}
	if ps, ok := sb.(sandbox.PostStarter); ok && !*unconfined {
		// Windows: the Agent was created suspended; it runs only once it
		// is in its Job Object.
		if err := ps.PostStart(cmd.Process.Pid); err != nil {
			cmd.Process.Kill()
			fail(fmt.Errorf("confining the agent: %w", err))
		}
		defer ps.Close()
	}
	runErr := cmd.Wait()
	// What WrapCommand set up beside the process, and what the Agent
	// left that git would run outside the sandbox (Run does this itself).
	report, err := sandbox.FinishCommand(cmd)
	if err != nil {
		fail(fmt.Errorf("finishing the agent: %w", err))
	}
	for _, g := range report.GitCreated {
		fmt.Fprintf(os.Stderr, "engine: the agent created %s: look at its hooks and config before running git there\n", g)
	}
	for _, r := range report.Removed {
		fmt.Fprintf(os.Stderr, "engine: removed %s, which the agent planted\n", r)
	}

	result := sandbox.ReadFreshCanaryResult(workspace, nonce, time.Minute)
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
