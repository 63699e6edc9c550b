package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/openparallax/sandbox"
)

// verify applies a Config to a child, runs the config-aware canary with its
// positive controls there, prints the result, and with --workspace writes
// it to DIR/.openparallax/sandbox.status.
func verify(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("verify", stderr)
	var a verifyArgs
	a.register(fs)
	workspace, asJSON := &a.workspace, &a.json
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "verify", "unexpected argument %q", fs.Arg(0))
	}
	if err := a.pf.check(); err != nil {
		return usageError(stderr, "verify", "%v", err)
	}
	cfg, err := a.cf.config()
	if err != nil {
		return usageError(stderr, "verify", "%v", err)
	}
	// --go-cache's grant, as run adds it: the canary's probes must see it
	// (a DIR not made yet is left out, and said). The rest of the
	// program's flags are checked only: the canary needs no environment.
	note, err := a.pf.planGoCache(&cfg)
	if err != nil {
		return usageError(stderr, "verify", "%v", err)
	}
	if note != "" {
		fmt.Fprintln(stderr, "sandbox verify: note:", note)
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

// verifyArgs are verify's flags: the Config's, the program's (checked
// only), and verify's own.
type verifyArgs struct {
	cf        configFlags
	pf        progFlags
	workspace string
	json      bool
}

func (a *verifyArgs) register(fs *flag.FlagSet) {
	a.cf.register(fs)
	a.pf.register(fs)
	fs.StringVar(&a.workspace, "workspace", "", "write the result to `DIR`/.openparallax/sandbox.status")
	fs.BoolVar(&a.json, "json", false, "print the result as JSON")
}
