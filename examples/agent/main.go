// Command agent is an example Agent: it confines itself to its workspace
// before it reads any input, proves the confinement with the canary, and
// writes the result where its Engine will read it.
//
//	go run ./examples/agent [-workspace DIR]
//
// Without -workspace it makes a temporary one. -skip-sandbox exists only to
// show an Engine refusing an Agent whose sandbox is not verified.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/openparallax/sandbox"
)

func main() {
	workspace := flag.String("workspace", "", "the agent's workspace (default: a new temporary directory)")
	skip := flag.Bool("skip-sandbox", false, "do not apply the sandbox (to demonstrate a refusing Engine)")
	flag.Parse()
	if *workspace == "" {
		dir, err := os.MkdirTemp("", "agent-workspace-")
		if err != nil {
			fail(err)
		}
		*workspace = dir
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{*workspace}}

	if !*skip {
		err := sandbox.New().ApplySelf(cfg)
		// On macOS a process cannot sandbox itself: the Engine starts it
		// under sandbox-exec (WrapCommand) and the canary below proves it.
		if err != nil && !(runtime.GOOS == "darwin" && errors.Is(err, sandbox.ErrUnavailable)) {
			fail(err)
		}
	}
	result := sandbox.VerifyCanaryFor(cfg)
	if err := sandbox.WriteCanaryResult(*workspace, result); err != nil {
		fail(err)
	}
	fmt.Println(result.Summary)
	if !result.Verified {
		os.Exit(1)
	}
	// Only now would a real agent read its first prompt.
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "agent:", err)
	os.Exit(1)
}
