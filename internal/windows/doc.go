// Package windows is the Windows engine of the sandbox: a Job Object
// (mode "job-object"). The plan ([PlanFor], [JobOptions], [Status]) is
// plain data computed from a resolved Config and the [Host] state, built and
// tested on every OS; the job bookkeeping ([Jobs], [ConfineSelf], [Start])
// and the canary probes ([Probes]) are Windows-only. It never imports the
// root package, which keeps the public API and thin adapters.
//
// # What it enforces
//
//   - Process creation from inside the job: unless Config.AllowProcessSpawn
//     is set, the job's active-process limit is 1, so CreateProcess from
//     the confined process fails with ERROR_NOT_ENOUGH_QUOTA. This is not
//     a denial of process creation as such: see below.
//   - No breakaway: JOB_OBJECT_LIMIT_BREAKAWAY_OK and
//     JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK are never set, so every process
//     created in the job (when spawning is allowed) stays in it, and
//     CREATE_BREAKAWAY_FROM_JOB fails with ERROR_ACCESS_DENIED.
//   - The job cannot be undone from inside: its security descriptor
//     (winjob.JobSecurity) refuses every request for more access to it, to
//     the owner too, so neither the query-only handle ApplySelf keeps nor
//     the reduced handle a WrapCommand caller keeps (assign, query,
//     terminate; query and terminate after PostStart) can be raised to one
//     that lifts a limit, by the confined process or by one that steals
//     the handle with PROCESS_DUP_HANDLE.
//   - Lifetime: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, and Close (and every
//     failure path) calls TerminateJobObject before closing the handle, so
//     a stolen copy of the handle does not keep the job's processes alive.
//     JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION makes a crash end the
//     process instead of waiting on a dialog.
//   - UI: every JOBOBJECT_BASIC_UI_RESTRICTIONS bit (desktop, display
//     settings, exit windows, global atoms, USER handles of processes outside
//     the job, reading and writing the clipboard, system parameters). A
//     headless agent needs none of them; the handle restriction stops window
//     messages to programs outside the job. When the caller is in a job
//     already (Windows Terminal, a CI runner, a libuv parent, an Engine's
//     job), Windows refuses to nest a job with UI restrictions, so the job
//     is made without them and PlanFor reports ui_restrictions not enforced.
//   - The console: WrapCommand starts the child without the caller's
//     console unless the caller chose a console flag, and Run also feeds a
//     console standard input through a pipe, so the child does not share
//     the caller's console or hold its input handle, through which it could
//     write keystrokes into it (WriteConsoleInput: the Windows TIOCSTI). It
//     can still attach to a console of a process of the same user
//     (AttachConsole): one of the same-user routes below. With spawning
//     denied, a console of the child's own (CREATE_NEW_CONSOLE, or
//     CREATE_NO_WINDOW without DETACHED_PROCESS) is refused ([ConsoleFlag]):
//     since Windows 8 the console host (conhost.exe) of a new console runs
//     in the job of the process it serves, and a job limited to one process
//     leaves it no room. For the same reason AllocConsole, in a program
//     WrapCommand started detached or in a process confined by ApplySelf
//     without a console, is expected to fail; a process that had a console
//     before ApplySelf keeps it (its console host is outside the job). Not
//     verified here: Wine does not enforce the limit.
//
// # What it does not enforce
//
// A Job Object is not an access-control boundary. Files, the registry,
// named pipes, AF_UNIX sockets and the network stay as open as the user's
// token allows: filesystem, exec, tcp_connect, tcp_bind, udp and
// unix_sockets are reported as not enforced by PlanFor, and
// Config.Strict therefore always fails with ErrNotEnforced on Windows.
// Nor does a job stop the process from opening other processes of the same
// user (OpenProcess): it can terminate them, inject code into them, take
// their handles, or name one as the parent of a new process
// (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), which then starts in that
// parent's job, outside this one; and WMI (Win32_Process.Create), the Task
// Scheduler, BITS and out-of-process COM servers start processes on its
// behalf. So process_spawn is reported as not enforced (inside the job
// only, with these routes), scope_signal as not enforced, and the canary's
// process_spawn_parent probe fails unless the process's own token keeps it
// from opening the user's processes for PROCESS_CREATE_PROCESS (an
// AppContainer token, an integrity level below medium, a restricted token:
// [SpawnParentProbe]), so a job alone is never verified. A caller that is elevated gives the
// child an administrator's token, which a job does not confine: reported as
// unelevated not enforced (Strict: an error).
//
// # Tokens: decided, not applied
//
// A low-integrity token would close the same-user routes above (a
// low-integrity process cannot open a medium-integrity process for
// PROCESS_CREATE_PROCESS, PROCESS_DUP_HANDLE or writing), but it can then
// write only to low-integrity places: not the workspace, the user's profile,
// %TEMP% or HKCU, unless those are relabelled, which changes the host's
// files. A restricted token breaks most programs in similar ways. This
// library therefore does not change the token; a caller that can live with
// that passes its own (cmd.SysProcAttr.Token, which WrapCommand keeps), or
// uses a container or VM. Wine ignores integrity levels, so CI could only
// test the plumbing of such a token, not its effect.
package windows
