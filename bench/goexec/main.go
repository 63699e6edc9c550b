//go:build linux

// Command goexec is the baseline of bench/spawn.sh: a Go program that does
// nothing but execve its arguments. A re-exec trampoline cannot be cheaper
// than this: the Go runtime starts, then the target is executed in place.
package main

import (
	"os"
	"syscall"
)

func main() {
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	os.Stderr.WriteString("goexec: " + err.Error() + "\n")
	os.Exit(126)
}
