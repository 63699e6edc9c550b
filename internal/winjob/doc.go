// Package winjob is the Job Object plumbing of the Windows sandbox: every
// raw Windows call the sandbox makes lives here, and all of them go through
// golang.org/x/sys/windows.
//
// # What a job made here enforces
//
// Every job made by [Create] or [ConfineSelf] has:
//
//   - JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: when the last handle to the job is
//     closed, every process still in it is terminated. The handles are never
//     inheritable, so only the process that made the job holds one.
//   - JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION: a crashing process dies at
//     once instead of waiting on an error-reporting dialog.
//   - No breakaway: neither JOB_OBJECT_LIMIT_BREAKAWAY_OK nor
//     JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK is set, so CreateProcess with
//     CREATE_BREAKAWAY_FROM_JOB fails with ERROR_ACCESS_DENIED and every
//     child a process in the job creates is in the job too.
//   - JOB_OBJECT_LIMIT_ACTIVE_PROCESS when [Options.ActiveProcessLimit] is
//     not 0: creating a process that would exceed the limit fails with
//     ERROR_NOT_ENOUGH_QUOTA. A limit of 1 means the confined process can
//     create no process at all.
//   - Every JOBOBJECT_BASIC_UI_RESTRICTIONS bit ([UIRestrictions]): a
//     headless agent has no business with the desktop, the clipboard, the
//     display settings, logging off or shutting down, system-wide parameters
//     (SystemParametersInfo), the global atom table, or USER handles
//     (windows, hooks) owned by processes outside the job. The last one is
//     the one that matters for security: it stops window messages to
//     programs outside the job (shatter attacks); the others stop an agent
//     from reading what the user copied or disturbing the session. Left out
//     with [Options.NoUIRestrictions], which a caller must set for a
//     process that is in a job already: Windows refuses to put such a
//     process into a job with UI restrictions.
//   - The security descriptor [JobSecurity]: no one, the owner included,
//     can raise a handle to the job to more access than it was given, so
//     the handles this package keeps ([EngineAccess], [SealedAccess], and
//     JOB_OBJECT_QUERY after [ConfineSelf]) cannot be turned into one that
//     lifts a limit, by the confined process or by one that steals them.
//
// # What an elevated process can still do
//
// An elevated (administrator) process can enable SeTakeOwnershipPrivilege,
// take ownership of the job and so on; it can also load drivers, debug any
// process and change the system. Confining an elevated process with a job
// is not meaningful; the sandbox package reports it.
//
// # What it does not enforce
//
// A Job Object is a resource and lifetime container, not an access-control
// boundary. Files, the registry, named pipes, the network, and other
// processes of the same user (OpenProcess, code injection, using one as the
// parent of a new process with PROC_THREAD_ATTRIBUTE_PARENT_PROCESS) are
// governed by the process token, which this package does not change.
//
// # Wine
//
// Wine 8.0 creates jobs, assigns processes, reports membership
// (IsProcessInJob, the process-ID list, accounting), denies breakaway,
// kills on close and on TerminateJobObject, and checks a handle's access
// and DuplicateHandle against the security descriptor like Windows does,
// but it does not enforce the active-process limit, reads limits back as 0
// (UI restrictions cannot be read back at all), does not refuse nesting a
// job with UI restrictions, and ignores the OWNER RIGHTS entry (it grants
// the owner WRITE_DAC). [UnderWine] lets tests of those properties say so.
//
// On other systems the package holds only what the Windows plan and the
// tests of its decisions need: [Options], and the pure decisions of
// [ResumeSuspendedProcess] (resume.go).
package winjob
