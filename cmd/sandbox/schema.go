package main

import (
	"fmt"
	"io"

	"github.com/openparallax/sandbox"
)

// schema prints the JSON Schema of a Config (sandbox.ConfigSchema), for a
// program or a tool-calling model that writes Configs.
func schema(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("schema", stderr)
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "schema", "unexpected argument %q", fs.Arg(0))
	}
	b, err := sandbox.ConfigSchema()
	if err != nil {
		fmt.Fprintln(stderr, "sandbox schema:", err)
		return exitRunFailed
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return exitOK
}
