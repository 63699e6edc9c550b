//go:build windows

package sandbox

import "github.com/openparallax/sandbox/internal/windows"

func probePlatform() Status {
	active, reason := windows.Status(windows.CurrentHost())
	return Status{Active: active, Mode: ModeJobObject, Filesystem: false, Network: false, Reason: reason}
}

func planPlatform(rc *resolvedConfig) Plan { return Plan(windows.PlanFor(rc, windows.CurrentHost())) }
