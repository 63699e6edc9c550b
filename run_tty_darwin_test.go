package sandbox_test

import "testing"

// requireTTYRun skips unless sandbox-exec works here (TestRunTTY's
// programs are part of macOS).
func requireTTYRun(t *testing.T) {
	t.Helper()
	requireSandboxExec(t)
}
