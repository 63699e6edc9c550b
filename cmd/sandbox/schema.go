package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/openparallax/sandbox"
)

// schemaArgs are schema's flags.
type schemaArgs struct{ request bool }

func (a *schemaArgs) register(fs *flag.FlagSet) {
	fs.BoolVar(&a.request, "request", false, "print the JSON Schema of a run request (sandbox run --request) instead of a Config")
}

// schema prints the JSON Schema of a Config (sandbox.ConfigSchema), or
// with --request of a whole run request (sandbox.RunRequestSchema), for a
// program or a tool-calling model that writes them.
func schema(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("schema", stderr)
	var a schemaArgs
	a.register(fs)
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "schema", "unexpected argument %q", fs.Arg(0))
	}
	get := sandbox.ConfigSchema
	if a.request {
		get = sandbox.RunRequestSchema
	}
	b, err := get()
	if err != nil {
		fmt.Fprintln(stderr, "sandbox schema:", err)
		return exitRunFailed
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return exitOK
}
