package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/openparallax/sandbox"
)

// verify applies a Config to a child, runs the config-aware canary with its
// positive controls there, prints the result, and with --workspace writes
// it to DIR/.openparallax/sandbox.status.
func verify(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("verify", stderr)
	var cf configFlags
	cf.register(fs)
	workspace := fs.String("workspace", "", "write the result to `DIR`/.openparallax/sandbox.status")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "verify", "unexpected argument %q", fs.Arg(0))
	}
	cfg, err := cf.config()
	if err != nil {
		return usageError(stderr, "verify", "%v", err)
	}
	r, err := canaryInChild(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "sandbox verify:", err)
		if errors.Is(err, sandbox.ErrUnavailable) || !sandbox.Probe().Active {
			return exitUnavailable
		}
		return exitNotVerified
	}
	if *workspace != "" {
		if err := sandbox.WriteCanaryResult(*workspace, r); err != nil {
			fmt.Fprintln(stderr, "sandbox verify:", err)
			return exitNotVerified
		}
	}
	if *asJSON {
		printJSON(stdout, r)
	} else {
		printProbes(stdout, colour(stdout), r)
	}
	switch {
	case r.Verified:
		return exitOK
	case r.Status == sandbox.CanaryUnavailable:
		return exitUnavailable
	default:
		return exitNotVerified
	}
}
