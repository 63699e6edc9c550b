package windows

// Launcher shims: programs that do their work by starting another program
// as a child, so that with spawning denied (a job that holds one process)
// they fail with ERROR_NOT_ENOUGH_QUOTA. Recognised by path, as data, on
// every OS.

import (
	"fmt"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// FeatureLauncherShims lists the programs of AllowedExecPaths that are known
// launcher shims, when spawning is denied: they cannot run as asked.
const FeatureLauncherShims = "launcher_shims"

// shimsNote is said in the plan wherever spawning is denied.
const shimsNote = "launcher shims start the real program as a child, so with spawning denied they fail with " +
	"ERROR_NOT_ENOUGH_QUOTA: Git for Windows' cmd\\git.exe and bin\\git.exe, the Python launcher py.exe, " +
	"Scoop's and Chocolatey's shims, and .cmd and .bat scripts such as npm.cmd, which cmd.exe runs " +
	"(each command in them a child); run the program they start, or set AllowProcessSpawn"

// LauncherShim says what kind of launcher shim the program at path is, or
// "" when it is none this package knows. path is a Windows path, with
// backslashes or slashes; the match is by pattern only (case-insensitive),
// nothing is read.
func LauncherShim(path string) string {
	p := strings.ToLower(strings.ReplaceAll(path, "/", `\`))
	base := p[strings.LastIndexByte(p, '\\')+1:]
	switch {
	case strings.HasSuffix(base, ".cmd") || strings.HasSuffix(base, ".bat"):
		return "a batch script: cmd.exe runs it and starts each program it names as a child"
	case strings.Contains(p, `\git\cmd\`) && strings.HasSuffix(base, ".exe"):
		return `Git for Windows' launcher in cmd\: it starts the real program (mingw64\bin\git.exe) as a child`
	case strings.Contains(p, `\git\bin\`) && (base == "git.exe" || base == "bash.exe" || base == "sh.exe"):
		return `Git for Windows' launcher in bin\: it starts the real program (mingw64\bin\git.exe, usr\bin\bash.exe) as a child`
	case base == "py.exe" || base == "pyw.exe":
		return "the Python launcher: it starts the python.exe it picks as a child"
	case strings.Contains(p, `\scoop\shims\`):
		return "a Scoop shim: it starts the program it points to as a child"
	case strings.Contains(p, `\chocolatey\bin\`):
		return "a Chocolatey shim: it starts the program it points to as a child"
	}
	return ""
}

// shimFeatures reports the launcher shims among the exec paths of rc when
// spawning is denied (nothing otherwise): each is granted, but cannot run
// as asked.
func shimFeatures(rc *spec.Resolved) []spec.Enforcement {
	if rc.Config.AllowProcessSpawn {
		return nil
	}
	var found []string
	for _, p := range rc.Exec {
		path := p.Resolved
		if path == "" {
			path = p.Given
		}
		if kind := LauncherShim(path); kind != "" {
			found = append(found, fmt.Sprintf("%s (%s)", path, kind))
		}
	}
	if len(found) == 0 {
		return nil
	}
	return []spec.Enforcement{{Feature: FeatureLauncherShims, Enforced: false,
		Detail: "AllowedExecPaths names launcher shims, which with spawning denied fail with ERROR_NOT_ENOUGH_QUOTA " +
			"when they start the real program: " + strings.Join(found, "; "),
		Hint: "grant the program each one starts instead (Git for Windows: mingw64\\bin\\git.exe; a script: the program it runs), " +
			"or set AllowProcessSpawn"}}
}
