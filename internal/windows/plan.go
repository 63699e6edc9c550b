package windows

import (
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/winjob"
)

// Features only the Windows plan reports.
const (
	// FeatureUI is the job's JOBOBJECT_BASIC_UI_RESTRICTIONS: enforced
	// unless the caller is in a job already.
	FeatureUI = "ui_restrictions"
	// FeatureUnelevated says the confined process does not run with an
	// administrator's token (a job does not confine an administrator):
	// enforced unless the caller is elevated.
	FeatureUnelevated = "unelevated"
)

// Host is what the plan depends on besides the Config: the state of the
// calling process, detected by [CurrentHost] on Windows and given as data
// by tests on every OS.
type Host struct {
	// InJob: this process is in a job already, so the jobs it makes get no
	// UI restrictions.
	InJob bool
	// Elevated: this process's token is elevated.
	Elevated bool
	// Unsupported, when not nil, is why a job with this library's limits
	// cannot be made here; the plan is then unavailable.
	Unsupported error
}

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
		"(not the workspace, the profile or HKCU unless they are relabelled); or run it in a container or VM. And: " + shimsNote

	// unavailable prefixes the reason when h.Unsupported is set.
	unavailable = "Job Objects unavailable: "
)

// Status is what Probe reports on a host in state h: whether the job
// mechanism is active, and why it is limited (or missing). Files and
// network are never confined by it.
func Status(h Host) (active bool, reason string) {
	if h.Unsupported != nil {
		return false, unavailable + h.Unsupported.Error()
	}
	r := []string{windowsLimits}
	if h.InJob {
		r = append(r, "this process is in a job already, so the jobs it makes get no UI restrictions "+
			"(Windows refuses to nest a job that has them)")
	}
	if h.Elevated {
		r = append(r, "this process is elevated: a job does not confine an administrator; run it unelevated")
	}
	return true, strings.Join(r, "; ")
}

// PlanFor is the plan of rc on a host in state h: unavailable (every
// requested feature not enforced) when h.Unsupported is set; otherwise
// files, exec, TCP, scope_signal and syscall_filter are never enforced,
// udp and unix_sockets are enforced only as grants, process_spawn only as
// a grant (denied inside the job only; launcher shims among the exec paths
// are then listed as launcher_shims), ui_restrictions unless h.InJob,
// unelevated unless h.Elevated, and requested limits, layer features and
// toolchain switches are reported not enforced.
func PlanFor(rc *spec.Resolved, h Host) spec.Plan {
	if h.Unsupported != nil {
		return spec.UnavailablePlan(spec.ModeJobObject, unavailable+h.Unsupported.Error())
	}
	cfg := rc.Config
	p := spec.Plan{Platform: "windows", Mechanism: spec.ModeJobObject, Available: true, Reason: windowsLimits}
	f := func(feature string, enforced bool, detail, hint string) {
		p.Features = append(p.Features, spec.Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
	f(spec.FeatureFilesystem, false, noFiles+": every file the user's token can open stays readable and writable", tokenHint)
	f(spec.FeatureExec, false, noFiles+": every file the user's token can read can be executed", tokenHint)
	f(spec.FeatureTCPConnect, false, noNetwork+": every host and port is reachable", tokenHint)
	f(spec.FeatureTCPBind, false, noNetwork+": every port can be bound", tokenHint)
	if cfg.AllowUDP {
		f(spec.FeatureUDP, true, "granted: UDP sockets to any host and port", "")
	} else {
		f(spec.FeatureUDP, false, noNetwork+": UDP sockets can be created", tokenHint)
	}
	if cfg.AllowUnixSockets {
		f(spec.FeatureUnixSockets, true, "granted: AF_UNIX sockets", "")
	} else {
		f(spec.FeatureUnixSockets, false, noFiles+": AF_UNIX sockets and named pipes can be reached", tokenHint)
	}
	f(spec.FeatureScopeSignal, false, "Job Objects do not stop opening other processes of the same user: "+
		"they can be terminated, injected into, have their handles duplicated, or be named as the parent of a new process, "+
		"which then starts outside the job", tokenHint)
	if cfg.AllowProcessSpawn {
		f(spec.FeatureSpawn, true, "granted: children are created in the same Job Object (breakaway denied) and end with it; "+
			"but "+spawnRoutes+", and those outlive the job", "")
	} else {
		f(spec.FeatureSpawn, false, "inside the job only: the active-process limit of 1 makes CreateProcess from the job fail "+
			"with ERROR_NOT_ENOUGH_QUOTA and breakaway is denied, but "+spawnRoutes, spawnHint)
	}
	p.Features = append(p.Features, shimFeatures(rc)...)
	if h.InJob {
		f(FeatureUI, false, "this process is in a job already, and Windows refuses to put a process that is in a job "+
			"into a job with UI restrictions, so the job has none: the clipboard, window messages to programs outside the job "+
			"(USER handles), global atoms, display settings, system parameters and logging off stay open",
			"start the caller outside any job, or start the child with CREATE_BREAKAWAY_FROM_JOB where the caller's job allows breakaway")
	} else {
		f(FeatureUI, true, "every JOBOBJECT_BASIC_UI_RESTRICTIONS bit: no clipboard, no USER handles of windows outside the job "+
			"(no window messages to them), no global atoms, display settings, system parameters, desktop switching or logging off", "")
	}
	if h.Elevated {
		f(FeatureUnelevated, false, "this process is elevated (an administrator's token) and the confined process gets that token: "+
			"it can take ownership of its job and lift the limits, debug or inject into any process, load drivers and change the system; "+
			"a job does not confine an administrator", "run the caller unelevated")
	} else {
		f(FeatureUnelevated, true, "the confined process runs with this process's unelevated token", "")
	}
	f(spec.FeatureSyscalls, false, "Job Objects do not filter system calls", "")
	p.Features = append(p.Features, spec.LayerFeatures(rc, "windows", true)...)
	p.Features = append(p.Features, spec.UnenforcedLimits(rc, "Job Object limits for memory, processes and CPU time are not implemented yet")...)
	p.Features = append(p.Features, spec.ToolchainFeaturesElsewhere(rc, "windows")...)
	return p
}

// JobOptions maps a Config to the limits of its job; nested says that the
// process to be put in the job is in a job already (the job then gets no UI
// restrictions). Without AllowProcessSpawn the job holds one process at
// most.
func JobOptions(cfg spec.Config, nested bool) winjob.Options {
	o := winjob.Options{NoUIRestrictions: nested}
	if !cfg.AllowProcessSpawn {
		o.ActiveProcessLimit = 1
	}
	return o
}
