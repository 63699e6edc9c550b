//go:build linux && !amd64 && !arm64

package trampoline

// The sandbox builds seccomp filters only for amd64 and arm64, so
// WrapCommand fails before a trampoline is started elsewhere.
const sysSeccomp = -1
