package seatbelt

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sbplQuote returns s as an SBPL string literal. SBPL strings (TinyScheme
// syntax) are written here with two escapes only, \\ and \"; control
// characters and invalid UTF-8 are refused rather than escaped, so a literal
// is always one line of plain text. Go's %q is not used: its escapes (\n,
// \x00, \u2028) are not SBPL's.
//
// Only constants and generated names reach this function; user paths are
// passed as parameters instead.
func sbplQuote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", errors.New("string literal is not valid UTF-8")
	}
	var sb strings.Builder
	sb.Grow(len(s) + 2)
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return "", fmt.Errorf("string literal contains control character U+%04X", r)
		case r == '\\' || r == '"':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String(), nil
}

// paramRef is the SBPL expression for a parameter. Names are generated
// ("R0"), so quoting cannot fail.
func paramRef(name string) string {
	q, err := sbplQuote(name)
	if err != nil {
		panic("seatbelt: bad parameter name " + name)
	}
	return "(param " + q + ")"
}

// builder accumulates profile text. The first quoting error is kept and
// reported by Generate; none is expected, since only constants are quoted.
type builder struct {
	sb  strings.Builder
	err error
}

func (b *builder) raw(line string) {
	b.sb.WriteString(line)
	b.sb.WriteByte('\n')
}

// comment writes a ";" comment line. Comments hold only text written in this
// package, never user input; a newline in one would end the comment, so it
// is an internal error.
func (b *builder) comment(text string) {
	if strings.ContainsAny(text, "\r\n") && b.err == nil {
		b.err = fmt.Errorf("comment %q spans lines", text)
	}
	b.raw("; " + text)
}

func (b *builder) section(title string) {
	b.sb.WriteByte('\n')
	b.comment("---- " + title + " ----")
}

// rule writes one rule preceded by its one-line reason.
func (b *builder) rule(why, rule string) {
	b.comment(why)
	b.raw(rule)
}

// quote is sbplQuote that records the error instead of returning it.
func (b *builder) quote(s string) string {
	q, err := sbplQuote(s)
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return `""`
	}
	return q
}

// regex returns s as an SBPL regular expression literal, #"s". Only
// constants of this package reach it; a backslash, a quote or anything but
// printable ASCII would need escaping rules this package does not rely on,
// so it is an internal error (write [.] rather than \.).
func (b *builder) regex(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			if b.err == nil {
				b.err = fmt.Errorf("regex %q holds %q", s, c)
			}
			return `#""`
		}
	}
	return `#"` + s + `"`
}

// sysctlNames are the sysctl-read names of the baseline: hardware and
// OS-version facts that libSystem, uname, sw_vers and language runtimes (Go,
// Node/V8, Python, Rust, the JVM) read at start-up. Nothing about other
// processes: no kern.proc*, kern.procargs*, kern.boottime or net.*.
var sysctlNames = []string{
	"hw.activecpu",
	"hw.byteorder",
	"hw.cachelinesize",
	"hw.cachelinesize_compat",
	"hw.cpufamily",
	"hw.cpusubtype",
	"hw.cputype",
	"hw.l1dcachesize",
	"hw.l1icachesize",
	"hw.l2cachesize",
	"hw.l3cachesize",
	"hw.logicalcpu",
	"hw.logicalcpu_max",
	"hw.machine",
	"hw.memsize",
	"hw.model",
	"hw.ncpu",
	"hw.nperflevels",
	"hw.pagesize",
	"hw.pagesize_compat",
	"hw.physicalcpu",
	"hw.physicalcpu_max",
	"hw.tbfrequency",
	"hw.tbfrequency_compat",
	"hw.vectorunit",
	"kern.argmax",
	"kern.hostname",
	"kern.maxfiles",
	"kern.maxfilesperproc",
	"kern.maxproc",
	"kern.ngroups",
	"kern.osproductversion",
	"kern.osrelease",
	"kern.ostype",
	"kern.osvariant_status",
	"kern.osversion",
	"kern.secure_kernel",
	"kern.tcsm_available",
	"kern.usrstack64",
	"kern.version",
	"machdep.cpu.brand_string",
	"sysctl.proc_cputype",
	"sysctl.proc_translated",
}

// sysctlPrefixes are sysctl-read name prefixes of the baseline: CPU feature
// flags (hw.optional.arm.FEAT_*, hw.optional.avx2_0, ...) used to pick code
// paths, and the performance-level (P/E core) tables.
var sysctlPrefixes = []string{
	"hw.optional.",
	"hw.perflevel",
}

// baselinePaths are the constant paths of the baseline, whose ancestors
// get file-read-metadata (ancestorRule).
var baselinePaths = []string{
	"/usr/lib", "/System/Library/Frameworks", "/System/Library/PrivateFrameworks", "/System/Library/SubFrameworks",
	"/System/Library/dyld", "/System/Volumes/Preboot/Cryptexes/OS", "/System/Cryptexes/OS", "/usr/share",
	"/System/Library/Perl", "/Library/Apple/usr/libexec/oah", "/usr/libexec/rosetta", "/private/var/db/oah",
	"/System/Library/CoreServices/SystemVersion.plist", "/private/etc/localtime", "/private/var/db/timezone",
	"/dev/null",
}

// ancestors lists the directories above paths, each once, in the order
// first met, without "/" (the baseline's own literal) and without the root
// symlinks /etc, /tmp and /var (which have a rule of their own).
func ancestors(paths []string) []string {
	var out []string
	seen := map[string]bool{"/": true, "/etc": true, "/tmp": true, "/var": true}
	for _, p := range paths {
		var up []string
		for d := path.Dir(p); !seen[d]; d = path.Dir(d) {
			seen[d] = true
			up = append(up, d)
		}
		slices.Reverse(up)
		out = append(out, up...)
	}
	return out
}

// writeAncestors writes a file-read-metadata rule on the literal
// ancestors of paths (constants of this package), with the reason why;
// nothing when there are none (a rule without a filter would allow every
// path).
func writeAncestors(b *builder, why string, paths []string) {
	up := ancestors(paths)
	if len(up) == 0 {
		return
	}
	var sb strings.Builder
	sb.WriteString("(allow file-read-metadata")
	for _, d := range up {
		sb.WriteString(" (literal " + b.quote(d) + ")")
	}
	sb.WriteString(")")
	b.rule(why, sb.String())
}

// writeBaseline writes the rules every profile has. Each rule is preceded by
// a one-line reason; see the package doc for what is left out and why.
func writeBaseline(b *builder) {
	q := b.quote
	mapped := []struct{ path, why string }{
		{"/usr/lib", "system dylibs and dyld itself: read and map executable (sealed system volume, never writable)"},
		{"/System/Library/Frameworks", "public frameworks: code is in the dyld cache, Info.plists and resources are read here"},
		{"/System/Library/PrivateFrameworks", "private frameworks loaded by libSystem and the public frameworks"},
		{"/System/Library/SubFrameworks", "framework content split out of Frameworks on recent macOS"},
		{"/System/Library/dyld", "dyld shared cache, macOS 11 and 12"},
		{"/System/Volumes/Preboot/Cryptexes/OS", "dyld shared cache, macOS 13 and later: the OS cryptex on the Preboot volume"},
		{"/System/Cryptexes/OS", "the same OS cryptex through its mount point; dyld may open either path"},
	}
	for _, m := range mapped {
		b.rule(m.why, "(allow file-read* file-map-executable (subpath "+q(m.path)+"))")
	}
	b.rule("macOS 26 dyld reads the root directory itself at launch and aborts without it (Apple's dyld-support.sb "+
		"grants it); a literal: the names in / and its attributes, nothing below", "(allow file-read* (literal "+q("/")+"))")
	b.rule("read-only system data: locale, terminfo, ICU, zoneinfo, file(1)'s magic (sealed system volume)",
		"(allow file-read* (subpath "+q("/usr/share")+"))")
	b.rule("the system Perl's modules and their compiled extensions (sealed system volume)",
		"(allow file-read* file-map-executable (subpath "+q("/System/Library/Perl")+"))")
	b.rule("Rosetta 2, for x86_64 programs on Apple silicon: its runtime and the translations oahd caches",
		"(allow file-read* file-map-executable (subpath "+q("/Library/Apple/usr/libexec/oah")+") (subpath "+
			q("/usr/libexec/rosetta")+") (subpath "+q("/private/var/db/oah")+"))")
	b.rule("OS version, read by CoreFoundation, sw_vers and language runtimes (the Compat file for programs built for 10.x)",
		"(allow file-read* (literal "+q("/System/Library/CoreServices/SystemVersion.plist")+") (literal "+
			q("/System/Library/CoreServices/SystemVersionCompat.plist")+"))")
	b.rule("stat() of the root symlinks /etc, /tmp and /var, which programs resolve (no listing, nothing below)",
		"(allow file-read-metadata (literal "+q("/etc")+") (literal "+q("/tmp")+") (literal "+q("/var")+"))")
	b.rule("local time zone for tzset()/localtime(); without it times print in UTC",
		"(allow file-read* (literal "+q("/private/etc/localtime")+") (subpath "+q("/private/var/db/timezone")+"))")
	b.rule("/dev/null: reads give EOF, writes are discarded (shells redirect to it all the time)",
		"(allow file-read* file-write-data (literal "+q("/dev/null")+"))")
	b.rule("zero and entropy devices, read-only (arc4random, runtime hash seeds, mmap of /dev/zero)",
		"(allow file-read* (literal "+q("/dev/zero")+") (literal "+q("/dev/random")+") (literal "+q("/dev/urandom")+"))")
	b.rule("the controlling terminal, opened read-write by programs that prompt; ENXIO when there is none",
		"(allow file-read* file-write-data (literal "+q("/dev/tty")+"))")
	b.rule("the process's own descriptors by name (echo > /dev/stderr, bash's <(...)): opening one duplicates "+
		"a descriptor it already has, and reaches nothing new",
		"(allow file-read* file-write-data (literal "+q("/dev/stdin")+") (literal "+q("/dev/stdout")+") (literal "+
			q("/dev/stderr")+") (subpath "+q("/dev/fd")+"))")

	var sb strings.Builder
	sb.WriteString("(allow sysctl-read")
	for _, n := range sysctlNames {
		sb.WriteString("\n  (sysctl-name " + q(n) + ")")
	}
	for _, n := range sysctlPrefixes {
		sb.WriteString("\n  (sysctl-name-prefix " + q(n) + ")")
	}
	sb.WriteString(")")
	b.rule("hardware and OS-version sysctls read at start-up; none about other processes (no kern.proc*, kern.procargs*)", sb.String())

	writeAncestors(b, "stat() of the directories above the baseline's paths (/System, /System/Library, /Library, /private/var/db, ...): "+
		"realpath and per-component lookups (git's RUNTIME_PREFIX, Perl's abs_path); metadata only, no listing", baselinePaths)
	b.rule("user and group lookups (getpwuid, getgrgid): shells, git, ssh, ls -l, Python's pwd module",
		"(allow mach-lookup (global-name "+q("com.apple.system.opendirectoryd.libinfo")+"))")
	b.rule("abort(), raise() and runtimes that signal their own process",
		"(allow signal (target self))")
	b.rule("libproc queries about itself (proc_pidinfo, proc_pidpath), used by Node, Python and ps-style tools",
		"(allow process-info* (target self))")
}
