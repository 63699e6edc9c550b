//go:build linux && cgo

package main

// With cgo enabled a program importing the sandbox is dynamically linked
// (net and psx pull in runtime/cgo), and so is the trampoline. The baseline
// links the same way, so that the comparison is of the trampoline's work,
// not of the dynamic loader's.
import _ "runtime/cgo"
