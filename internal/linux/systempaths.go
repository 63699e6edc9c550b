package linux

// The paths every sandboxed process is granted on Linux, as data: the
// defaults (SystemPaths), the dynamic loaders a directory on the exec
// allowlist may need, and where POSIX shared memory lives.

// SystemPath is a path every sandboxed process is granted on Linux.
type SystemPath struct {
	Path   string `json:"path"`
	Write  bool   `json:"write"` // read and write (devices); otherwise read-only
	Reason string `json:"reason"`
}

// SystemPaths lists, in one place, what every sandboxed process on Linux may
// access besides its Config. Shared libraries are read-only: mapping a library
// needs read, not execute, and Landlock's execute right is only checked by
// execve. Paths absent on a machine are skipped and listed in Plan.Skipped.
var SystemPaths = []SystemPath{
	{Path: "/usr/lib", Reason: "shared libraries, loader, locale archives"},
	{Path: "/lib", Reason: "shared libraries (often a link to /usr/lib)"},
	{Path: "/lib64", Reason: "the ELF interpreter on x86-64"},
	{Path: "/usr/lib64", Reason: "shared libraries on lib64 distributions"},
	{Path: "/etc/ld.so.cache", Reason: "dynamic loader cache"},
	{Path: "/etc/ld.so.conf", Reason: "dynamic loader configuration"},
	{Path: "/etc/ld.so.conf.d", Reason: "dynamic loader configuration"},
	{Path: "/etc/hosts", Reason: "resolving localhost"},
	{Path: "/etc/resolv.conf", Reason: "DNS resolver configuration"},
	{Path: "/etc/nsswitch.conf", Reason: "name service order"},
	{Path: "/etc/host.conf", Reason: "resolver options"},
	{Path: "/etc/gai.conf", Reason: "address sorting for getaddrinfo"},
	{Path: "/etc/ssl/certs", Reason: "system CA certificates"},
	{Path: "/usr/share/ca-certificates", Reason: "CA certificates /etc/ssl/certs links to"},
	{Path: "/etc/pki/tls/certs", Reason: "system CA certificates (Fedora family)"},
	{Path: "/etc/localtime", Reason: "local time zone"},
	{Path: "/etc/timezone", Reason: "local time zone name"},
	{Path: "/usr/share/zoneinfo", Reason: "time zone database"},
	{Path: "/usr/share/locale", Reason: "message catalogs"},
	{Path: "/dev/null", Write: true, Reason: "the null device"},
	{Path: "/dev/zero", Write: true, Reason: "zero source (also mapped by some allocators)"},
	{Path: "/dev/full", Write: true, Reason: "the full device"},
	{Path: "/dev/urandom", Reason: "randomness"},
	{Path: "/dev/random", Reason: "randomness"},
	{Path: "/dev/tty", Write: true, Reason: "the controlling terminal"},
	{Path: "/proc/self", Reason: "the process's own /proc entries (resolved to /proc/<pid>; not other processes')"},

	// Toolchains: what compilers, interpreters and version control read
	// on every run. Each entry is package data or system-wide
	// configuration that is world-readable and names no user; never a
	// directory that also holds keys (/etc/ssl, not /etc/ssl/private),
	// nor a file where per-user or registry credentials are kept
	// (/etc/npmrc, /etc/pip.conf and the like are left out).
	{Path: "/usr/share", Reason: "architecture-independent package data: perl and python modules, python-wheels for venv, git templates, terminfo, zoneinfo, locale"},
	{Path: "/usr/include", Reason: "C and C++ headers for compilers"},
	{Path: "/usr/local/include", Reason: "locally installed headers"},
	{Path: "/usr/local/lib", Reason: "locally installed libraries and site-packages"},
	{Path: "/usr/local/share", Reason: "locally installed package data"},
	{Path: "/usr/libexec", Reason: "helper programs of installed packages (read; executing them needs an exec grant)"},
	{Path: "/etc/ssl/openssl.cnf", Reason: "OpenSSL configuration (node and python read it at start-up); /etc/ssl/private stays denied"},
	{Path: "/etc/gitconfig", Reason: "git's system-wide configuration"},
	{Path: "/etc/debian_version", Reason: "distribution version (python venv, build scripts)"},
	{Path: "/etc/os-release", Reason: "distribution identification"},
	{Path: "/etc/lsb-release", Reason: "distribution identification"},
	{Path: "/etc/perl", Reason: "Debian's perl configuration and modules (in @INC)"},
	{Path: "/etc/python3", Reason: "Debian's python configuration"},
	{Path: "/etc/python3.8", Reason: "Debian's sitecustomize for Python 3.8"},
	{Path: "/etc/python3.9", Reason: "Debian's sitecustomize for Python 3.9"},
	{Path: "/etc/python3.10", Reason: "Debian's sitecustomize for Python 3.10"},
	{Path: "/etc/python3.11", Reason: "Debian's sitecustomize for Python 3.11"},
	{Path: "/etc/python3.12", Reason: "Debian's sitecustomize for Python 3.12"},
	{Path: "/etc/python3.13", Reason: "Debian's sitecustomize for Python 3.13"},
	{Path: "/etc/python3.14", Reason: "Debian's sitecustomize for Python 3.14"},
	{Path: "/etc/terminfo", Reason: "terminal descriptions"},
	{Path: "/etc/inputrc", Reason: "readline configuration"},
	{Path: "/etc/mime.types", Reason: "file type table"},
	{Path: "/etc/magic", Reason: "file(1) type table"},
	{Path: "/proc/cpuinfo", Reason: "CPU count and features (node's os.cpus, nproc fallbacks, runtimes sizing thread pools)"},
	{Path: "/proc/meminfo", Reason: "memory size (runtimes sizing heaps, free, ps)"},
	{Path: "/proc/stat", Reason: "CPU times and boot time (node's os.cpus, ps); host-wide counters, no per-process data"},
	{Path: "/proc/loadavg", Reason: "load average (build tools throttling parallel jobs)"},
	{Path: "/proc/uptime", Reason: "system uptime (ps, time measurements)"},
	{Path: "/proc/version", Reason: "kernel version string"},
	{Path: "/proc/filesystems", Reason: "filesystem types (libselinux, ls, mount helpers)"},
	{Path: "/sys/devices/system/cpu", Reason: "CPU topology and online set (sysconf(_SC_NPROCESSORS_ONLN), node, Go, OpenMP)"},
}

// elfInterpreters are the dynamic loaders granted execute when a directory is
// on the exec allowlist (the loader of each binary inside cannot be known in
// advance). A granted file gets exactly its own PT_INTERP.
var elfInterpreters = []string{
	"/lib64/ld-linux-x86-64.so.2",
	"/lib/ld-linux-aarch64.so.1",
	"/lib/ld-musl-x86_64.so.1",
	"/lib/ld-musl-aarch64.so.1",
}

// sharedMemoryDir is where glibc keeps POSIX shared memory and named
// semaphores (see Config.AllowSharedMemory).
const sharedMemoryDir = "/dev/shm"

// inChild, as buildLinuxPolicy's procSelf, says the rules are made in
