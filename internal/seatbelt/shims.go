package seatbelt

import "strings"

// macOS starts some programs through a shim: a small program in /usr/bin or
// /bin that picks the real one and executes it. Granting the shim alone
// grants a program that cannot do its job, so a profile whose ExecPaths hold
// a shim (literally, or inside an exec directory) also grants what that shim
// reads and executes. Each list below is fixed text of this package.

// ShellShim is /bin/sh: sh(1) on macOS reads the symlink
// /private/var/select/sh and re-executes the shell it names (bash by
// default, dash or zsh when an administrator chose so).
const ShellShim = "/bin/sh"

// shellSelect is the symlink /bin/sh reads; shellTargets are the shells it
// may name.
var (
	shellSelect  = "/private/var/select/sh"
	shellTargets = []string{"/bin/bash", "/bin/dash", "/bin/zsh"}
)

// PerlShim is /usr/bin/perl, which executes a versioned /usr/bin/perl5.N
// (chosen by the com.apple.versioner.perl preference); the modules are in
// /System/Library/Perl, which the baseline grants.
const PerlShim = "/usr/bin/perl"

// perlTargets matches the versioned perls the shim executes; perlSite holds
// the modules an administrator installed, first in the system perl's @INC.
const (
	perlTargets = `^/usr/bin/perl5[.][0-9]+$`
	perlSite    = "/Library/Perl"
)

// XcrunShims are the /usr/bin programs that libxcselect forwards to the
// active developer directory (the Command Line Tools or Xcode): they read
// the symlink /private/var/db/xcode_select_link and execute the real tool
// from /Library/Developer/CommandLineTools. A developer directory inside
// Xcode.app is not granted: grant it in ExecPaths.
var XcrunShims = []string{
	"/usr/bin/ar", "/usr/bin/as", "/usr/bin/bison", "/usr/bin/c++", "/usr/bin/c89", "/usr/bin/c99",
	"/usr/bin/cc", "/usr/bin/clang", "/usr/bin/clang++", "/usr/bin/cpp", "/usr/bin/ctags",
	"/usr/bin/dsymutil", "/usr/bin/flex", "/usr/bin/g++", "/usr/bin/gcc", "/usr/bin/gcov",
	"/usr/bin/git", "/usr/bin/git-receive-pack", "/usr/bin/git-shell", "/usr/bin/git-upload-archive",
	"/usr/bin/git-upload-pack", "/usr/bin/gm4", "/usr/bin/gnumake", "/usr/bin/gperf",
	"/usr/bin/install_name_tool", "/usr/bin/ld", "/usr/bin/lex", "/usr/bin/libtool", "/usr/bin/lipo",
	"/usr/bin/lldb", "/usr/bin/m4", "/usr/bin/make", "/usr/bin/nm", "/usr/bin/nmedit", "/usr/bin/otool",
	"/usr/bin/pip3", "/usr/bin/pydoc3", "/usr/bin/python3", "/usr/bin/python3-config", "/usr/bin/ranlib",
	"/usr/bin/segedit", "/usr/bin/size", "/usr/bin/strings", "/usr/bin/strip", "/usr/bin/swift",
	"/usr/bin/swiftc", "/usr/bin/unifdef", "/usr/bin/xcodebuild", "/usr/bin/xcrun", "/usr/bin/yacc",
}

// xcrunSelect is the symlink to the active developer directory, xcrunTools
// the Command Line Tools, xcrunBin the xcrun the shims may execute.
const (
	xcrunSelect = "/private/var/db/xcode_select_link"
	xcrunTools  = "/Library/Developer/CommandLineTools"
	xcrunBin    = "/usr/bin/xcrun"
)

// Shims reports which shims the exec grants cover: a path equal to the
// shim, or a directory (isDir; nil means every path is one) that contains
// it. The Policy fields of the same names are usually set from it.
func Shims(execPaths []string, isDir func(string) bool) (shell, perl, xcrun bool) {
	if isDir == nil {
		isDir = func(string) bool { return true }
	}
	covers := func(shim string) bool {
		for _, e := range execPaths {
			if e == shim || isDir(e) && (e == "/" || strings.HasPrefix(shim, e+"/")) {
				return true
			}
		}
		return false
	}
	shell, perl = covers(ShellShim), covers(PerlShim)
	for _, s := range XcrunShims {
		xcrun = xcrun || covers(s)
	}
	return shell, perl, xcrun
}

// writeShims writes the rules for the shims p grants.
func writeShims(b *builder, p Policy) {
	q := b.quote
	if !p.ShellShim && !p.PerlShim && !p.XcrunShim {
		b.comment("none: no shim (sh, perl, an xcrun tool) is in ExecPaths")
		return
	}
	if p.ShellShim {
		b.rule("ShellShim: sh reads which shell it is", "(allow file-read* (literal "+q(shellSelect)+"))")
		var sb strings.Builder
		for _, s := range shellTargets {
			sb.WriteString(" (literal " + q(s) + ")")
		}
		b.rule("ShellShim: the shells sh re-executes", "(allow process-exec*"+sb.String()+")")
		b.rule("ShellShim: dyld loads them", "(allow file-read* file-map-executable"+sb.String()+")")
	}
	if p.PerlShim {
		b.rule("PerlShim: the versioned perl the shim executes", "(allow process-exec* (regex "+b.regex(perlTargets)+"))")
		b.rule("PerlShim: dyld loads it", "(allow file-read* file-map-executable (regex "+b.regex(perlTargets)+"))")
		b.rule("PerlShim: the site module directories early in the system perl's @INC (perl may die on EPERM there)",
			"(allow file-read* file-map-executable (subpath "+q(perlSite)+"))")
	}
	if p.XcrunShim {
		b.rule("XcrunShim: the active developer directory, a symlink the shims read", "(allow file-read* (literal "+q(xcrunSelect)+"))")
		b.rule("XcrunShim: xcrun and the Command Line Tools the shims execute",
			"(allow process-exec* (literal "+q(xcrunBin)+") (subpath "+q(xcrunTools)+"))")
		b.rule("XcrunShim: read and map the tools, their libraries and headers",
			"(allow file-read* file-map-executable (literal "+q(xcrunBin)+") (subpath "+q(xcrunTools)+"))")
		if p.DeveloperDir != "" {
			b.rule("XcrunShim: DeveloperDir, the active developer directory outside the Command Line Tools "+
				"(Xcode.app): what the shims execute there", "(allow process-exec* file-read* file-map-executable (subpath "+paramRef("D0")+"))")
			b.rule("XcrunShim: stat() of the directories above DeveloperDir", "(allow file-read-metadata (path-ancestors "+paramRef("D0")+"))")
		}
	}
	writeAncestors(b, "stat() of the directories above what the shims read and execute (/bin, /usr/bin, /Library/Developer, ...)",
		shimConstPaths(p))
}

// shimConstPaths are the constant paths the shims of p bring, for
// ancestorRule.
func shimConstPaths(p Policy) []string {
	var out []string
	if p.ShellShim {
		out = append(append(out, shellSelect), shellTargets...)
	}
	if p.PerlShim {
		out = append(out, "/usr/bin/perl5", perlSite)
	}
	if p.XcrunShim {
		out = append(out, xcrunSelect, xcrunBin, xcrunTools)
	}
	return out
}
