//go:build linux

package sandbox

import "os"

// SANDBOX_TEST_GO_TRAMPOLINE=1 runs this package's tests with the Go
// trampoline as WrapCommand's child half, where the static helper would
// otherwise be used (.ci/run runs the WrapCommand tests both ways).
func init() {
	if os.Getenv("SANDBOX_TEST_GO_TRAMPOLINE") == "1" {
		forceGoTrampoline = true
	}
}
