// Package seatbelt turns a [Policy] into a deny-by-default macOS Seatbelt
// profile (SBPL) and the argv for running a command under it with
// /usr/bin/sandbox-exec.
//
// Generation is pure and platform independent: [Generate] only builds text,
// so the profile is tested on every OS. Nothing here calls sandbox-exec; the
// caller runs [SandboxExecPath] with [Profile.Args].
//
// # Threat model
//
// The confined process is an AI agent, or a tool it drives, that may be
// hostile: it tries to read files it was not given (keys, tokens, other
// projects), write outside its workspace (shell start-up files, git hooks of
// other repositories, launch agents), run programs it was not given, reach
// hosts and ports it was not given, or talk to privileged local services
// (docker.sock, ssh-agent, the keychain, the pasteboard) that would act for it.
//
// The profile starts with (deny default), so everything not allowed is
// refused by the kernel. What is allowed is a small, commented baseline that
// a command-line process needs to start (see Baseline) plus exactly the
// grants in the Policy. The caller is trusted; the strings it passes are not
// assumed to be well-formed: a user path never becomes SBPL text. Each path
// is handed to sandbox-exec as a parameter (-D NAME=VALUE) and the profile
// refers to it only as (param "NAME"), so no path, however many quotes,
// parentheses or newlines it holds, can change the profile's structure. The
// profile text depends on the shape of the Policy (how many paths, which are
// directories, which flags are set, which ports), never on the path strings
// themselves; the fuzz test checks exactly that.
//
// # Baseline
//
// Every profile allows, each rule commented in the text:
//
//   - read and map-executable of /usr/lib, /System/Library/Frameworks,
//     /System/Library/PrivateFrameworks and /System/Library/SubFrameworks
//     (dyld, libSystem, frameworks and their resources; all on the sealed,
//     read-only system volume, and nothing there is user data);
//   - the dyld shared cache: /System/Library/dyld (macOS 11 and 12) and the OS
//     cryptex /System/Volumes/Preboot/Cryptexes/OS, also seen as
//     /System/Cryptexes/OS (macOS 13 and later). /private/var/db/dyld held the
//     cache only up to macOS 10.15, which this package does not target, and
//     is not granted;
//   - read of SystemVersion.plist and of the local time zone
//     (/private/etc/localtime, /private/var/db/timezone);
//   - read of /dev/null, /dev/zero, /dev/random, /dev/urandom and /dev/tty,
//     write-data of /dev/null and /dev/tty (a program that prompts opens
//     /dev/tty read-write; read alone would be useless);
//   - sysctl-read of a fixed list of hardware and OS-version names. The list
//     is deliberately not "all of sysctl": kern.procargs2 and kern.proc.*
//     would disclose the argv and environment of the user's other processes;
//   - one mach-lookup: com.apple.system.opendirectoryd.libinfo, through which
//     libSystem answers getpwuid/getgrgid (shells, git, ssh, ls -l, Python's
//     pwd module). Logging (com.apple.logd), notify(3), cfprefsd and dirhelper
//     are left out: a denied lookup there only loses a log line or falls back;
//   - signal and process-info* on the process itself, after
//     (deny file-map-executable process-info* iokit-get-properties nvram*),
//     which comes right after (deny default): (deny default) is reported to
//     leave those four allowed; Apple's daemon profiles begin with this deny
//     and Chromium's renderer profile denies the last three
//     (crbug.com/799149). file-map-executable (mmap with PROT_EXEC: what
//     dyld and dlopen do, and Python extension modules, Node addons,
//     DYLD_INSERT_LIBRARIES) is allowed again only for the baseline's
//     system libraries, ExecPaths, the shims' programs and, with
//     ExecWritePaths, WritePaths: a ReadPaths grant is never code;
//   - file-read* of "/" itself, as a literal (its names and attributes,
//     nothing below): dyld on macOS 26 reads it at launch and aborts the
//     program without it (reproduced with plain sandbox-exec by others, and
//     fixed with this same literal rule; Apple's dyld-support.sb grants it);
//   - read of the system's read-only data: /usr/share (locale, terminfo,
//     ICU, file(1)'s magic), /System/Library/Perl (also map-executable, for
//     compiled modules), SystemVersionCompat.plist, and the Rosetta 2 runtime
//     and translation cache (/Library/Apple/usr/libexec/oah,
//     /usr/libexec/rosetta, /private/var/db/oah) for x86_64 programs on
//     Apple silicon;
//   - read and write-data of /dev/stdin, /dev/stdout, /dev/stderr and
//     /dev/fd/*: opening one duplicates a descriptor the process already has;
//   - file-read-metadata of the root symlinks /etc, /tmp and /var, and
//     of each directory above the baseline's paths and the shims' (/usr,
//     /System, /System/Library, /Library, /private/var/db, ...), each a
//     literal, so that realpath component by component (git's
//     RUNTIME_PREFIX, Perl's abs_path) works as it does for granted paths.
//
// # Shims
//
// /bin/sh, /usr/bin/perl and the xcrun tools (/usr/bin/git, python3, make,
// clang, ...; see [XcrunShims]) are shims that execute the real program.
// With Policy.ShellShim, PerlShim and XcrunShim (set them from [Shims],
// which looks for the shims in ExecPaths) the profile also grants, as fixed
// text: /private/var/select/sh and executing /bin/bash, /bin/dash and
// /bin/zsh; executing /usr/bin/perl5.N and reading /Library/Perl;
// /private/var/db/xcode_select_link,
// /usr/bin/xcrun and executing anything in /Library/Developer/CommandLineTools.
// A developer directory elsewhere (xcode-select pointing into Xcode.app, or
// DEVELOPER_DIR) is granted the same way when the caller names it in
// Policy.DeveloperDir (a parameter, D0); internal/darwin reads the
// selection when it makes the policy.
//
// The rest of /Library/Apple is not granted: it holds Apple software
// installed outside the sealed volume (XProtect data and the like), and only
// Rosetta's runtime there is needed, by x86_64 programs on Apple silicon.
// Nothing is executable unless listed in ExecPaths (or brought by a shim),
// and that includes the command sandbox-exec is asked to start.
//
// # Paths
//
// ReadPaths, WritePaths and ExecPaths must be absolute, clean (path.Clean),
// valid UTF-8, free of NUL and control characters, at most 1024 bytes, and
// already resolved: Seatbelt matches the real path, so a rule for /tmp/x
// would never match /private/tmp/x. Paths under the macOS root symlinks /tmp,
// /var and /etc are rejected with a hint rather than silently never matching.
//
// Policy.IsDir tells a directory (rule on the subpath, recursive) from a file
// (rule on the literal path). Generate calls it once per distinct path and
// is only as deterministic as that function; [StatIsDir] is the usual choice.
// When IsDir is nil every path is treated as a directory; a subpath rule on a
// file matches only that file, so the one difference is that if the file is
// later replaced by a directory its contents are covered too.
//
// Each granted path also gets file-read-metadata on its ancestors
// (path-ancestors): stat of /, /private, /private/tmp for /private/tmp/ws, so
// that realpath, getcwd and mkdir -p work. That discloses the existence and
// attributes of those directories, not their contents.
//
// # Processes
//
// ExecPaths get process-exec* (which covers process-exec-interpreter, as a
// "#!" interpreter may be checked) plus read and file-map-executable, so dyld can
// load a granted program and the dylibs or frameworks in a granted tree.
// LibraryPaths (the libraries of granted programs outside the system's,
// which internal/darwin reads from their Mach-O load commands) get read and
// file-map-executable only, each as itself: never executed, never a tree.
// process-fork, and signals to other processes of the same sandbox, are
// allowed only with AllowSpawn. Children inherit the sandbox and with it the
// same exec allowlist. An exec grant bounds which binaries run, not what they
// do: a granted /bin/sh runs any script it can read.
//
// Policy.ExecWritePaths (Config.AllowExecWritePaths) adds process-exec*
// and file-map-executable on WritePaths: whatever the program writes there
// it may run and load. Policy.PythonSemaphores (Config.AllowSharedMemory)
// allows ipc-posix-sem for the names Python's multiprocessing gives its
// semaphores ([PythonSemaphorePrefixes]); POSIX semaphores are one
// namespace for the whole host, so the grant is shared, not private.
//
// # Git protection
//
// A repository's hooks and config run outside the sandbox the next time
// the user runs git there. With Policy.GitProtection the profile ends with
// (deny file-write* (regex ...)) for [GitProtectRegexes]: hooks/, config,
// config.worktree and commondir of every git directory named .git or
// NAME.git, and of its modules/NAME and worktrees/NAME, at any depth, in
// any letter case (macOS volumes are case-insensitive by default), and the
// .git or NAME.git entry itself, so that none can be created, written (a
// "gitdir:" file), renamed or removed: a directory of hooks the program
// made cannot be renamed into place, nor a .git file point at one. SBPL
// applies the last rule that matches, so the deny is the last form, after
// the WritePaths allow it overrides. The regular expressions are fixed
// text: they hold for repositories the program creates or moves, too. A
// git directory of another name that the caller found (Policy.GitDirs:
// internal/darwin reads the ".git" file at the top of each write path, its
// commondir, and whether a write path is itself a bare repository) is
// denied the same way by parameters (G0, G1, ...) in the same last form.
// Not covered: another git directory of another name deeper in the write
// paths, and on HFS+ a .git spelled with the Unicode characters HFS+
// ignores. The cost: git init, git clone, git submodule update --init and
// git worktree add fail in the write paths (they write config or
// commondir), and so does writing a branch's tracking configuration.
//
// # Network
//
// Seatbelt's network filters take a host of only "localhost" or "*" and a
// port. So TCPConnect maps a loopback host ("localhost", 127.0.0.0/8, ::1,
// ::ffff:127.x) to (remote tcp "localhost:PORT"), "" and "*" to
// (remote tcp "*:PORT"), and any other host, name, address or address
// range, to "*:PORT" with a line in Profile.NotEnforced: the port is
// enforced, the host is not. A range inside 127.0.0.0/8 is a loopback
// host: "localhost:PORT", which matches 127.0.0.1 only of it (narrower
// than asked).
// An Endpoint with AnyPort becomes Seatbelt's own any-port form, "HOST:*":
// (remote tcp "localhost:*") for a loopback host (enforced), and
// (remote tcp "*:*") for any other (the host reported, as above).
// When a TCPConnect host is a DNS name or a wildcard (not localhost), the
// profile also lets getaddrinfo reach mDNSResponder (its Unix socket
// /private/var/run/mDNSResponder) and grants the network helpers resolvers
// use (mach-lookup of com.apple.SystemConfiguration.DNSConfiguration and
// configd, sysctl-read of net.routetable). mDNSResponder resolves any name,
// so queries for names the process makes up reach any authoritative DNS
// server: name resolution is a channel of its own, and a caller must report
// it. The name localhost gets read of /private/etc/hosts instead, never the
// resolver (a program whose libc will only ask mDNSResponder fails to
// resolve it: use 127.0.0.1). When any TCPConnect endpoint is not loopback,
// the profile also allows read of /private/etc/ssl and, unless
// Policy.NoTrustd, TLS certificate evaluation (mach-lookup
// com.apple.trustd.agent): trustd fetches the AIA, OCSP and CRL URLs in the
// certificates the process hands it, another channel to hosts no rule names.
//
// TCPBind allows network-bind and network-inbound on (local tcp "*:PORT"):
// the process may listen on that port on every local address, so the port is
// reachable from the network unless a firewall says otherwise; Seatbelt
// cannot restrict who connects.
//
// Seatbelt's "localhost" matches 127.0.0.1 and ::1; a dual-stack (IPv6)
// socket talking to 127.0.0.1 presents ::ffff:127.0.0.1 and may be refused
// (fail closed). Other 127/8 addresses may likewise not match.
//
// AllowUnixSockets allows creating AF_UNIX sockets (socketpair, local IPC)
// and binding or connecting to socket files inside WritePaths only. Sockets
// elsewhere, such as /var/run/docker.sock or an ssh-agent socket, stay
// denied: they would let the agent act through an unconfined daemon.
//
// # What Seatbelt cannot enforce
//
//   - Host names and address ranges: only localhost or any host, per port
//     (see Network). UDP is never granted.
//   - Open file descriptors: restrictions apply when a resource is acquired;
//     an inherited descriptor (stdin, stdout, stderr, ExtraFiles) works
//     whatever the profile says. Pass only what the agent may use.
//   - The environment: sandbox-exec passes its environment to the command.
//     Scrub secrets from it.
//   - Resources: CPU, memory, disk use, process count (with AllowSpawn a fork
//     bomb is possible). Use rlimits or a supervisor.
//   - Symlinks are not a way out: rules match resolved paths, so a symlink
//     inside a writable tree that points outside it resolves outside and is
//     denied. Hard links: creating one is assumed to be the separate
//     file-link operation, which no rule allows, so every link(2) fails
//     with EPERM, even between two files of one write path (git falls back
//     to rename, pnpm to copying; a tool that only links fails). Whether
//     that holds, or whether file-write* covers file-link and a link of a
//     same-volume file the profile does not let the program write (a read
//     path, or a file not granted at all) would make it writable through
//     the workspace, is decided by the first Mac run of
//     TestDarwinHardLinkOutOfReadPath and TestDarwinHardLinkInsideWritePath
//     in the root package; until then the first is assumed.
//   - Services reached by an allowed mach-lookup or socket act with their own
//     privileges (opendirectoryd, and with network trustd and mDNSResponder).
//   - Device grants (Camera, Microphone) allow the Seatbelt operation only.
//     TCC consent is still needed and belongs to the responsible app (the
//     terminal), and the capture frameworks use services this profile does
//     not grant, so a capture tool may still fail: it fails closed.
//   - Interactive terminals: ioctl on a terminal (/dev/ttys*) is not
//     granted, so isatty-style checks through ioctl may report "not a tty",
//     except on the one pseudo-terminal Policy.Terminal names (Run with
//     TTY opens it for the program) and, with ControllingTerminal (it is
//     the program's controlling terminal), on /dev/tty, so that a program
//     handed the caller's own terminal cannot push input into it.
//   - sandbox-exec and SBPL are deprecated and undocumented by Apple; this
//     profile uses the operation and filter names used by Chromium, WebKit
//     and the Codex and Claude Code sandboxes, and targets macOS 13 to 26.
//     It was written from those profiles and has not been run on a Mac by
//     its authors: only generated, parsed and fuzzed.
//
// # What other profiles grant and this one does not
//
// Codex's Seatbelt profiles grant operations this one never names; each is
// left out on purpose, and here is what a first run on a Mac should look
// at if something fails:
//
//   - file-test-existence (Codex puts it beside its reads): not granted.
//     Expect: where a release checks existence (access(2) with F_OK,
//     some getattrlist probes) as this operation rather than as a read, a
//     granted path may answer EPERM to the check while reading it works;
//     the remedy would be file-test-existence beside file-read* on the
//     same filters. Outside the grants its absence keeps existence hidden.
//   - system-mac-syscall (the Sandbox policy's call 67, "does this
//     process expect a container", and vnguard's guarded vnodes): not
//     granted. Expect: EPERM to those calls; libSystem reads the first as
//     "no container", and guarded vnodes are used by Apple's daemons, not
//     by command-line tools: a log line, not a failure.
//   - system-fsctl for FSIOC_CAS_BSDFLAGS (chflags by compare-and-swap,
//     used by copyfile(3) to copy BSD flags on APFS): not granted. Expect:
//     cp -p, install and ditto may warn that they could not copy flags;
//     chflags(2) itself is a file-write-flags operation, granted inside
//     WritePaths.
//   - mach-host* (the host port: host_processor_info, which Node's
//     os.cpus() calls): not granted. Expect: os.cpus() returns an empty
//     list, so a tool sizing a pool by os.cpus().length picks 0 or 1;
//     sysctl hw.ncpu and hw.logicalcpu (granted) give the count.
//   - ipc-posix-sem without a name filter: not granted; only Python's
//     names, with PythonSemaphores, through (ipc-posix-name-prefix ...),
//     a filter Apple's profiles use with the shared-memory operations. If
//     a release refuses it with ipc-posix-sem, sandbox-exec fails to
//     compile the profile and every such run fails (closed). Expect:
//     other programs' sem_open answers EPERM.
//   - pseudo-tty and /dev/ptmx (openpty): not granted. Expect: script(1),
//     expect, tmux and node-pty fail to open a pseudo-terminal.
//   - cfprefsd and user-preference-read, logd and diagnosticd,
//     com.apple.PowerManagement.control, iokit-open of
//     RootDomainUserClient, /dev/dtracehelper: not granted. Expect:
//     CFPreferences reads return the defaults, os_log lines are lost, power
//     assertions (caffeinate) and DTrace probe registration fail quietly.
//
// # Invoking sandbox-exec
//
// [Profile.Args] returns ["-p", text, "-D", "NAME=VALUE", ..., "--", name,
// args...]. sandbox-exec parses its options with getopt(3) ("-D NAME=VALUE"
// and "-DNAME=VALUE" are equivalent), and getopt takes "--" as the end of
// the options. OpenAI Codex relies on this: codex-rs/sandboxing/src/seatbelt.rs
// builds "-p", policy, "-DKEY=VALUE"..., "--", command, and its macOS tests
// run /usr/bin/sandbox-exec with exactly those arguments. The "--" keeps a
// command name that starts with "-" from being read as an option. name should
// be an absolute path inside ExecPaths: sandbox-exec execs it with execvp, and
// a bare name would make it probe PATH entries the profile does not grant.
//
// A parameter value may contain "=": sandbox-exec splits "NAME=VALUE" at the
// first "=" (the documented form is "-D key=value"). Parameter names are
// generated here ("R0", "W1", "X2") and never contain "=", so the first "=" is
// always the separator. sandbox-exec's source is not published; should a
// release ever split at another "=", the name would not match and (param
// "R0") would be undefined (SBPL's param yields a non-string for an undefined
// name, which is what Chromium's param-defined? tests), so the rule would
// fail to compile or match nothing: fail closed, never wider.
//
// Run the command with a working directory inside a granted path, an
// environment without secrets, and only the file descriptors it may use.
// Most tools also want a writable temporary directory: grant a private one
// in WritePaths and point TMPDIR at it. Nothing under the home directory is
// readable unless granted, dotfiles included.
package seatbelt
