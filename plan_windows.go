//go:build windows

package sandbox

import (
	"strings"
	"sync"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/winjob"
)

// Features only the Windows plan reports.
const (
	// featureUI: the job's JOBOBJECT_BASIC_UI_RESTRICTIONS.
	featureUI = "ui_restrictions"
	// featureUnelevated: the confined process does not run with an
	// administrator's token (a job does not confine an administrator).
	featureUnelevated = "unelevated"
)

// jobSupport is nil when a job with this library's limits can be made here.
var jobSupport = sync.OnceValue(winjob.Supported)

const (
	windowsLimits = "Job Objects do not isolate files or network: only process creation from inside the job, " +
		"breakaway from the job and UI access are restricted; files, the registry, the network and other processes " +
		"of the same user stay as open as the user's token allows"
	noFiles   = "Job Objects do not restrict file access"
	noNetwork = "Job Objects do not restrict network access"
	tokenHint = "run the process with a restricted or low-integrity token, or in a container or VM"

	// spawnRoutes are the ways a process in the job starts a process
	// outside it, as the user, which a job cannot stop.
	spawnRoutes = "processes of the same user start processes outside the job: CreateProcess with " +
		"PROC_THREAD_ATTRIBUTE_PARENT_PROCESS naming another process of the user (opened with PROCESS_CREATE_PROCESS); " +
		"WMI Win32_Process.Create, the Task Scheduler, BITS and out-of-process COM servers, which start processes on its behalf; " +
		"keystrokes written into a console it shares or attaches to (WriteConsoleInput, AttachConsole)"
	spawnHint = "run the process with a low-integrity token (cmd.SysProcAttr.Token, which WrapCommand keeps): it cannot open " +
		"the user's other processes with PROCESS_CREATE_PROCESS, but it can write only to low-integrity places " +
		"(not the workspace, the profile or HKCU unless they are relabelled); or run it in a container or VM"
)

// inJobAlready reports whether this process is in a job already (started
// from Windows Terminal, a CI runner, libuv, Start-Process -Wait, or an
// Engine's job). Windows refuses to put a process that is in a job into a
// job with UI restrictions, and a child is in its parent's job, so jobs
// made by such a process get none. An error counts as not in a job: the
// UI restrictions are then set, and an assignment Windows refuses fails
// closed.
func inJobAlready() bool {
	in, err := winjob.InJob(windows.CurrentProcess(), 0)
	return err == nil && in
}

// elevated reports whether this process's token is elevated.
func elevated() bool { return windows.GetCurrentProcessToken().IsElevated() }

// hostState is what the plan depends on besides the Config.
type hostState struct {
	inJob, elevated bool
}

func currentHost() hostState { return hostState{inJob: inJobAlready(), elevated: elevated()} }

func probePlatform() Status {
	if err := jobSupport(); err != nil {
		return Status{Mode: ModeJobObject, Reason: "Job Objects unavailable: " + err.Error()}
	}
	reason := []string{windowsLimits}
	h := currentHost()
	if h.inJob {
		reason = append(reason, "this process is in a job already, so the jobs it makes get no UI restrictions "+
			"(Windows refuses to nest a job that has them)")
	}
	if h.elevated {
		reason = append(reason, "this process is elevated: a job does not confine an administrator; run it unelevated")
	}
	return Status{Active: true, Mode: ModeJobObject, Filesystem: false, Network: false, Reason: strings.Join(reason, "; ")}
}

func planPlatform(rc *resolvedConfig) Plan {
	if err := jobSupport(); err != nil {
		return Plan(spec.UnavailablePlan(ModeJobObject, "Job Objects unavailable: "+err.Error()))
	}
	return windowsPlan(rc, currentHost())
}

// windowsPlan is the plan of rc on a host in state h.
func windowsPlan(rc *resolvedConfig, h hostState) Plan {
	cfg := rc.Config
	p := Plan{Platform: "windows", Mechanism: ModeJobObject, Available: true, Reason: windowsLimits}
	f := func(feature string, enforced bool, detail, hint string) {
		p.Features = append(p.Features, Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
	f(FeatureFilesystem, false, noFiles+": every file the user's token can open stays readable and writable", tokenHint)
	f(FeatureExec, false, noFiles+": every file the user's token can read can be executed", tokenHint)
	f(FeatureTCPConnect, false, noNetwork+": every host and port is reachable", tokenHint)
	f(FeatureTCPBind, false, noNetwork+": every port can be bound", tokenHint)
	if cfg.AllowUDP {
		f(FeatureUDP, true, "granted: UDP sockets to any host and port", "")
	} else {
		f(FeatureUDP, false, noNetwork+": UDP sockets can be created", tokenHint)
	}
	if cfg.AllowUnixSockets {
		f(FeatureUnixSockets, true, "granted: AF_UNIX sockets", "")
	} else {
		f(FeatureUnixSockets, false, noFiles+": AF_UNIX sockets and named pipes can be reached", tokenHint)
	}
	f(FeatureScopeSignal, false, "Job Objects do not stop opening other processes of the same user: "+
		"they can be terminated, injected into, have their handles duplicated, or be named as the parent of a new process, "+
		"which then starts outside the job", tokenHint)
	if cfg.AllowProcessSpawn {
		f(FeatureSpawn, true, "granted: children are created in the same Job Object (breakaway denied) and end with it; "+
			"but "+spawnRoutes+", and those outlive the job", "")
	} else {
		f(FeatureSpawn, false, "inside the job only: the active-process limit of 1 makes CreateProcess from the job fail "+
			"with ERROR_NOT_ENOUGH_QUOTA and breakaway is denied, but "+spawnRoutes, spawnHint)
	}
	if h.inJob {
		f(featureUI, false, "this process is in a job already, and Windows refuses to put a process that is in a job "+
			"into a job with UI restrictions, so the job has none: the clipboard, window messages to programs outside the job "+
			"(USER handles), global atoms, display settings, system parameters and logging off stay open",
			"start the caller outside any job, or start the child with CREATE_BREAKAWAY_FROM_JOB where the caller's job allows breakaway")
	} else {
		f(featureUI, true, "every JOBOBJECT_BASIC_UI_RESTRICTIONS bit: no clipboard, no USER handles of windows outside the job "+
			"(no window messages to them), no global atoms, display settings, system parameters, desktop switching or logging off", "")
	}
	if h.elevated {
		f(featureUnelevated, false, "this process is elevated (an administrator's token) and the confined process gets that token: "+
			"it can take ownership of its job and lift the limits, debug or inject into any process, load drivers and change the system; "+
			"a job does not confine an administrator", "run the caller unelevated")
	} else {
		f(featureUnelevated, true, "the confined process runs with this process's unelevated token", "")
	}
	f(FeatureSyscalls, false, "Job Objects do not filter system calls", "")
	p.Features = append(p.Features, spec.LayerFeatures(rc, true)...)
	p.Features = append(p.Features, unenforcedLimits(rc, "Job Object limits for memory, processes and CPU time are not implemented yet")...)
	p.Features = append(p.Features, spec.ToolchainFeaturesElsewhere(rc)...)
	return p
}

// jobOptions maps a Config to the limits of its job; nested says that the
// process to be put in the job is in a job already.
func jobOptions(cfg Config, nested bool) winjob.Options {
	o := winjob.Options{NoUIRestrictions: nested}
	if !cfg.AllowProcessSpawn {
		o.ActiveProcessLimit = 1
	}
	return o
}
