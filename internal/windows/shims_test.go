package windows

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// Launcher shims by path, as data (Windows paths, tested on every OS).
func TestLauncherShim(t *testing.T) {
	for path, want := range map[string]string{
		`C:\Program Files\Git\cmd\git.exe`:                          "Git for Windows' launcher in cmd",
		`c:/program files/git/cmd/gitk.exe`:                         "Git for Windows' launcher in cmd",
		`C:\Program Files\Git\bin\git.exe`:                          "Git for Windows' launcher in bin",
		`C:\Program Files\Git\bin\bash.exe`:                         "Git for Windows' launcher in bin",
		`C:\Windows\py.exe`:                                         "Python launcher",
		`C:\Users\a\AppData\Local\Programs\Python\Launcher\pyw.exe`: "Python launcher",
		`C:\Users\a\scoop\shims\rg.exe`:                             "Scoop shim",
		`C:\ProgramData\chocolatey\bin\jq.exe`:                      "Chocolatey shim",
		`C:\Program Files\nodejs\npm.cmd`:                           "batch script",
		`D:\tools\build.BAT`:                                        "batch script",
		`C:\Program Files\Git\mingw64\bin\git.exe`:                  "",
		`C:\Program Files\Git\usr\bin\bash.exe`:                     "",
		`C:\Program Files\Python312\python.exe`:                     "",
		`C:\Program Files\nodejs\node.exe`:                          "",
		`C:\tools\copy.exe`:                                         "",
		`C:\Program Files\Git\bin\git-lfs.exe`:                      "",
	} {
		got := LauncherShim(path)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("LauncherShim(%q) = %q, want %q", path, got, want)
		}
	}
}

// The plan lists the shims among the exec paths when spawning is denied,
// and only then; the process_spawn hint says it in any case.
func TestPlanForLauncherShims(t *testing.T) {
	rc := &spec.Resolved{Exec: []spec.Path{
		{Given: `C:\Program Files\Git\cmd\git.exe`, Resolved: `C:\Program Files\Git\cmd\git.exe`},
		{Given: `C:\Program Files\nodejs\node.exe`, Resolved: `C:\Program Files\nodejs\node.exe`},
		{Given: `npm.cmd`, Resolved: `C:\Program Files\nodejs\npm.cmd`},
	}}
	m := byFeature(t, PlanFor(rc, Host{}))
	f, ok := m[FeatureLauncherShims]
	if !ok || f.Enforced || !strings.Contains(f.Detail, `C:\Program Files\Git\cmd\git.exe (Git for Windows`) ||
		!strings.Contains(f.Detail, `C:\Program Files\nodejs\npm.cmd (a batch script`) || strings.Contains(f.Detail, "node.exe (") ||
		!strings.Contains(f.Hint, "AllowProcessSpawn") {
		t.Errorf("launcher_shims %+v (listed %v), want the git launcher and npm.cmd, not node.exe", f, ok)
	}
	if h := m[spec.FeatureSpawn].Hint; !strings.Contains(h, "py.exe") || !strings.Contains(h, "npm.cmd") {
		t.Errorf("process_spawn hint %q does not mention launcher shims", h)
	}
	rc.Config.AllowProcessSpawn = true
	if f, ok := byFeature(t, PlanFor(rc, Host{}))[FeatureLauncherShims]; ok {
		t.Errorf("launcher_shims listed with spawning granted: %+v", f)
	}
	rc.Config.AllowProcessSpawn = false
	rc.Exec = rc.Exec[1:2]
	if f, ok := byFeature(t, PlanFor(rc, Host{}))[FeatureLauncherShims]; ok {
		t.Errorf("launcher_shims listed without a shim: %+v", f)
	}
}
