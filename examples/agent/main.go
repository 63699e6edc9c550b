// Command agent is an example Agent: it confines itself to its workspace
// before it reads any input, proves the confinement with the canary, and
// writes the result where its Engine will read it.
//
//	go run ./examples/agent [-workspace DIR]
//
// Without -workspace it makes a temporary one. -skip-sandbox and
// -drop-nonce exist only to show an Engine refusing an Agent whose sandbox
// is not verified, or whose result is not from this run.
//
// Started by examples/engine, it finds in its environment the Config the
// Engine confined it with (SANDBOX_CONFIG, JSON) and the nonce the Engine
// expects in its canary result (OPENPARALLAX_CANARY_NONCE). It applies the
// same Config to itself (a second, identical layer: harmless, and what an
// Agent started without WrapCommand needs) and runs the canary for it.
package main

import (
	"encoding/json"
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
	dropNonce := flag.Bool("drop-nonce", false, "leave the Engine's nonce out of the result, as an old result would (to demonstrate a refusing Engine)")
	flag.Parse()
	if *workspace == "" {
		dir, err := os.MkdirTemp("", "agent-workspace-")
		if err != nil {
			fail(err)
		}
		*workspace = dir
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{*workspace}}
	if s := os.Getenv("SANDBOX_CONFIG"); s != "" {
		// The Config the Engine confined this process with: the canary
		// then probes exactly what it denies.
		cfg = sandbox.Config{}
		if err := json.Unmarshal([]byte(s), &cfg); err != nil {
			fail(fmt.Errorf("SANDBOX_CONFIG: %w", err))
		}
	}

	if !*skip {
		err := sandbox.New().ApplySelf(cfg)
		// On macOS a process cannot sandbox itself: the Engine starts it
		// under sandbox-exec (WrapCommand) and the canary below proves it.
		if err != nil && !(runtime.GOOS == "darwin" && errors.Is(err, sandbox.ErrUnavailable)) {
			fail(err)
		}
	}
	result := sandbox.VerifyCanaryFor(cfg)
	// The Engine refuses a result without the nonce it handed out.
	result.Nonce = os.Getenv(sandbox.CanaryNonceEnv)
	if *dropNonce {
		result.Nonce = ""
	}
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
