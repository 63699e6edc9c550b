//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestRunTempDir: every run gets a private, writable TMPDIR (replacing the
// caller's), a HOME inside it unless the caller set one, and nothing of it
// is left after the run, also when the run is killed on timeout and the
// program made a directory of it inaccessible (which stops the removal
// only for a caller that is not root: as root this part passes anyway).
func TestRunTempDir(t *testing.T) {
	requireSandbox(t)
	for _, prog := range []string{"/bin/mkdir", "/bin/chmod", "/bin/touch", "/bin/sleep"} {
		need(t, prog, "coreutils")
	}
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	script := `echo "$TMPDIR"; echo "$HOME"; mkdir -p "$TMPDIR/a/b" && echo x > "$TMPDIR/a/b/f" && chmod 0 "$TMPDIR/a" && echo made; touch /tmp/sandbox-run-escape 2>/dev/null && echo wrote-tmp; exec sleep 60`
	os.Remove("/tmp/sandbox-run-escape")
	for _, env := range [][]string{
		{"PATH=/usr/bin:/bin", "TMPDIR=/tmp"},
		{"PATH=/usr/bin:/bin", "HOME=/nonexistent-home"},
	} {
		res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script},
			// The timeout ends `sleep 60`; it must leave the shell time to
			// print and make its files first, also under the race
			// detector on a loaded machine (500 ms did not, once).
			sandbox.RunOptions{Env: env, Timeout: 3 * time.Second})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v: want a timeout, got %v (%+v)", env, err, res)
		}
		lines := strings.Split(string(res.Stdout), "\n")
		if len(lines) < 3 || lines[2] != "made" {
			t.Fatalf("%v: stdout %q stderr %q", env, res.Stdout, res.Stderr)
		}
		tmp, home := lines[0], lines[1]
		if !strings.Contains(tmp, "sandbox-run-") {
			t.Errorf("%v: TMPDIR %q is not the run's own", env, tmp)
		}
		wantHome := filepath.Join(filepath.Dir(tmp), "home")
		if env[1] == "HOME=/nonexistent-home" {
			wantHome = "/nonexistent-home"
		}
		if home != wantHome {
			t.Errorf("%v: HOME %q, want %q", env, home, wantHome)
		}
		// Where the mount layer is used (the default) /tmp is the
		// program's own and writable: nothing written there may reach
		// the host's; without the layer, the write itself is refused.
		if _, err := os.Lstat("/tmp/sandbox-run-escape"); err == nil {
			os.Remove("/tmp/sandbox-run-escape")
			t.Errorf("%v: the program wrote to the host's /tmp", env)
		}
		if ok, _ := mountLayerAvailable(t); !ok && strings.Contains(string(res.Stdout), "wrote-tmp") {
			t.Errorf("%v: the program wrote to /tmp without the mount layer", env)
		}
		if _, err := os.Stat(filepath.Dir(tmp)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: %s left behind: %v", env, filepath.Dir(tmp), err)
		}
	}
}

// TestRunTempDirUntouched: a run that writes nothing in its temporary
// directory (the quick removal) leaves nothing of it either, with and
// without a HOME of the caller's.
func TestRunTempDirUntouched(t *testing.T) {
	requireSandbox(t)
	sh := need(t, "/bin/sh", "dash")
	for _, env := range [][]string{nil, {"HOME=/nonexistent"}} {
		res, err := sandbox.Run(context.Background(), sandbox.Config{}, sh, []string{"-c", `echo "$TMPDIR"`}, sandbox.RunOptions{Env: env})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v: exit %d %s", err, res.ExitCode, res.Stderr)
		}
		tmp := strings.TrimSpace(string(res.Stdout))
		if !strings.Contains(tmp, "sandbox-run-") {
			t.Fatalf("TMPDIR %q", tmp)
		}
		if _, err := os.Lstat(filepath.Dir(tmp)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("env %q: %s is left after the run: %v", env, filepath.Dir(tmp), err)
		}
	}
}
