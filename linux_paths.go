package sandbox

import "github.com/openparallax/sandbox/internal/linux"

// SystemPath is a path every sandboxed process is granted on Linux.
type SystemPath = linux.SystemPath

// SystemPaths lists, in one place, what every sandboxed process on Linux may
// access besides its Config. Shared libraries are read-only: mapping a library
// needs read, not execute, and Landlock's execute right is only checked by
// execve. Paths absent on a machine are skipped and listed in Plan.Skipped.
var SystemPaths = linux.SystemPaths
