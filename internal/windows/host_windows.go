//go:build windows

package windows

import (
	"sync"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/winjob"
)

// jobSupport is nil when a job with this library's limits can be made here.
var jobSupport = sync.OnceValue(winjob.Supported)

// InJobAlready reports whether this process is in a job already (started
// from Windows Terminal, a CI runner, libuv, Start-Process -Wait, or an
// Engine's job). Windows refuses to put a process that is in a job into a
// job with UI restrictions, and a child is in its parent's job, so jobs
// made by such a process get none. An error counts as not in a job: the
// UI restrictions are then set, and an assignment Windows refuses fails
// closed.
func InJobAlready() bool {
	in, err := winjob.InJob(windows.CurrentProcess(), 0)
	return err == nil && in
}

// elevated reports whether this process's token is elevated.
func elevated() bool { return windows.GetCurrentProcessToken().IsElevated() }

// CurrentHost detects the state of this process that the plan depends on.
// Whether jobs can be made here is checked once per process; the rest on
// every call.
func CurrentHost() Host {
	if err := jobSupport(); err != nil {
		return Host{Unsupported: err}
	}
	return Host{InJob: InJobAlready(), Elevated: elevated()}
}
