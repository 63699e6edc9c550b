package runtemp

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// goTelemetryMode is where the go command reads its telemetry mode under
// a home (golang.org/x/telemetry: os.UserConfigDir()/go/telemetry/mode),
// relative to it: $HOME/.config on Linux and the other Unixes while
// XDG_CONFIG_HOME is unset, $HOME/Library/Application Support on macOS.
// "" on Windows, where the config directory is %AppData%, not under HOME.
func goTelemetryMode() string {
	switch runtime.GOOS {
	case "windows", "plan9":
		return ""
	case "darwin", "ios":
		return filepath.Join("Library", "Application Support", "go", "telemetry", "mode")
	}
	return filepath.Join(".config", "go", "telemetry", "mode")
}

// writeGoTelemetryOff writes Go's telemetry mode "off" in the private home
// (never in a home the caller passed). Every go command otherwise starts
// a telemetry child in a new session (setsid), which the sandbox refuses,
// and prints "can't start telemetry child process" on each run; with the
// mode off it starts none and writes no counters. The program may change
// the file: it is its own home's, removed after the run.
func writeGoTelemetryOff(home string) error {
	rel := goTelemetryMode()
	if rel == "" {
		return nil
	}
	// Each directory of the path is made, outermost first: home is
	// fresh and empty, so none exists yet (MkdirAll would first stat
	// every level).
	p := home
	for _, c := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		p = filepath.Join(p, c)
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(home, rel), []byte("off\n"), 0o600)
}

// quickRemoval lists what New made inside the directory, deepest first,
// for Remove's quick path: each removed only if it is as New left it
// (a directory empty), else the full removal runs.
func (t *Dir) quickRemoval() []string {
	if t.home == "" {
		return []string{"tmp"}
	}
	var out []string
	if rel := goTelemetryMode(); rel != "" {
		for p := filepath.Join("home", rel); p != "home"; p = filepath.Dir(p) {
			out = append(out, filepath.ToSlash(p))
		}
	}
	return append(out, "home", "tmp")
}
