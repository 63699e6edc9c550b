//go:build linux

package sandbox_test

// Real toolchains under Run with the obvious grants and nothing else: the
// workspace read-write, spawning, and exec of /usr/bin and /bin. Each
// subtest runs the real program (skipping, with the reason, only where it
// is not installed) and, in the same run, checks that a secret file beside
// the workspace and a fake ~/.ssh/id_ed25519 stay unreadable and that the
// run's temporary directory is gone afterwards.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

type toolchainEnv struct {
	ws, secret, key string
}

func newToolchainEnv(t *testing.T) toolchainEnv {
	t.Helper()
	base := realTempDir(t)
	e := toolchainEnv{
		ws:     filepath.Join(base, "ws"),
		secret: filepath.Join(base, "secret.txt"),
		key:    filepath.Join(base, "home", ".ssh", "id_ed25519"),
	}
	os.Mkdir(e.ws, 0o755)
	os.WriteFile(e.secret, []byte("SECRET-CONTENT\n"), 0o644)
	os.MkdirAll(filepath.Dir(e.key), 0o700)
	os.WriteFile(e.key, []byte("-----BEGIN OPENSSH PRIVATE KEY----- FAKE\n"), 0o600)
	return e
}

func toolchainCfg(ws string) sandbox.Config {
	return sandbox.Config{
		AllowedWritePaths: []string{ws},
		AllowProcessSpawn: true,
		AllowedExecPaths:  []string{"/usr/bin", "/bin"},
	}
}

// sh runs script with /bin/sh in the workspace under cfg, then, in the same
// run, tries the secret and the key. It returns stdout and stderr.
func (e toolchainEnv) sh(t *testing.T, cfg sandbox.Config, script string) (string, string) {
	t.Helper()
	full := script + `
status=$?
echo "RUN-TMPDIR=$TMPDIR"
for f in "$SECRET" "$KEY"; do
	if cat "$f" 2>/dev/null; then echo "LEAK: read $f"; fi
done
exit $status`
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", full}, sandbox.RunOptions{
		Dir:     e.ws,
		Env:     []string{"PATH=/usr/bin:/bin", "SECRET=" + e.secret, "KEY=" + e.key},
		Timeout: 2 * time.Minute,
	})
	out, errOut := string(res.Stdout), string(res.Stderr)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%s\n=> %v, exit %d (%s)\nstdout:\n%s\nstderr:\n%s", script, err, res.ExitCode, res.State, out, errOut)
	}
	if strings.Contains(out, "LEAK") || strings.Contains(out, "SECRET-CONTENT") || strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("the secret or the key was readable:\n%s", out)
	}
	_, tmp, ok := strings.Cut(out, "RUN-TMPDIR=")
	tmp, _, _ = strings.Cut(tmp, "\n")
	if !ok || !strings.Contains(tmp, "sandbox-run-") {
		t.Errorf("TMPDIR %q: want the run's private directory", tmp)
	} else if _, err := os.Stat(filepath.Dir(tmp)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run's temporary directory %s is still there after the run: %v", filepath.Dir(tmp), err)
	}
	return out, errOut
}

func TestToolchains(t *testing.T) {
	requireSandbox(t)

	t.Run("git", func(t *testing.T) {
		need(t, "/usr/bin/git", "git")
		e := newToolchainEnv(t)
		out, errOut := e.sh(t, toolchainCfg(e.ws), `set -e
git init -q repo
cd repo
echo hello > file.txt
git add file.txt
git -c user.name=Sandbox -c user.email=sandbox@example.invalid commit -q -m "first commit"
git log --format='%s by %an'
cd ..
git clone -q "file://$PWD/repo" clone
cat clone/file.txt`)
		if !strings.Contains(out, "first commit by Sandbox\nhello\n") {
			t.Errorf("git log / clone output:\n%s", out)
		}
		if strings.Contains(out+errOut, "fatal:") {
			t.Errorf("git reported fatal: (even if it exited 0):\nstdout:\n%s\nstderr:\n%s", out, errOut)
		}
	})

	t.Run("python venv", func(t *testing.T) {
		need(t, "/usr/bin/python3", "python3")
		if exec.Command("/usr/bin/python3", "-c", "import ensurepip").Run() != nil {
			t.Skip("python3 has no ensurepip here (Debian package python3-venv): venv not tested")
		}
		e := newToolchainEnv(t)
		e.sh(t, toolchainCfg(e.ws), `set -e
python3 -m venv venv
venv/bin/python -c 1`)
	})

	t.Run("python tempfile", func(t *testing.T) {
		need(t, "/usr/bin/python3", "python3")
		e := newToolchainEnv(t)
		out, _ := e.sh(t, toolchainCfg(e.ws), `python3 -c 'import tempfile, os; d = tempfile.mkdtemp(); print("MKDTEMP=" + d); print(os.environ["TMPDIR"])'`)
		if !strings.Contains(out, "MKDTEMP=/") || strings.Contains(out, "MKDTEMP="+e.ws) {
			t.Errorf("mkdtemp: %s", out)
		}
		if ents, _ := os.ReadDir(e.ws); len(ents) != 0 {
			t.Errorf("the workspace got %v: temporary files belong in TMPDIR", ents)
		}
	})

	t.Run("python multiprocessing", func(t *testing.T) {
		need(t, "/usr/bin/python3", "python3")
		e := newToolchainEnv(t)
		// POSIX semaphores live in /dev/shm, which is the host's: the
		// program gets it only with AllowSharedMemory (reported by
		// PlanFor as not private).
		cfg := toolchainCfg(e.ws)
		cfg.AllowSharedMemory = true
		out, _ := e.sh(t, cfg, `python3 -c '
import multiprocessing
def sq(x): return x * x
if __name__ == "__main__":
    with multiprocessing.Pool(2) as p: print(sum(p.map(sq, range(10))))'`)
		if !strings.HasPrefix(out, "285\n") {
			t.Errorf("multiprocessing.Pool: %s", out)
		}
	})

	t.Run("perl", func(t *testing.T) {
		need(t, "/usr/bin/perl", "perl")
		e := newToolchainEnv(t)
		out, _ := e.sh(t, toolchainCfg(e.ws), `perl -MJSON::PP -e 'print encode_json([1, "a"]), "\n"'`)
		if !strings.HasPrefix(out, `[1,"a"]`+"\n") {
			t.Errorf("perl: %s", out)
		}
	})

	t.Run("node", func(t *testing.T) {
		need(t, "/usr/bin/node", "nodejs")
		e := newToolchainEnv(t)
		out, _ := e.sh(t, toolchainCfg(e.ws), `node -e 'console.log("cpus", require("os").cpus().length > 0)'`)
		if !strings.HasPrefix(out, "cpus true\n") {
			t.Errorf("node: %s", out)
		}
	})

	t.Run("gcc and a.out", func(t *testing.T) {
		need(t, "/usr/bin/gcc", "gcc")
		e := newToolchainEnv(t)
		os.WriteFile(filepath.Join(e.ws, "hello.c"), []byte("#include <stdio.h>\nint main(void) { puts(\"hello from a.out\"); return 0; }\n"), 0o644)
		cfg := toolchainCfg(e.ws)
		cfg.AllowExecWritePaths = true
		out, _ := e.sh(t, cfg, `gcc hello.c && ./a.out`)
		if !strings.HasPrefix(out, "hello from a.out\n") {
			t.Errorf("gcc: %s", out)
		}
		// Without the switch, the program built in the workspace does
		// not run.
		res, err := sandbox.Run(context.Background(), toolchainCfg(e.ws), "/bin/sh", []string{"-c", "./a.out"},
			sandbox.RunOptions{Dir: e.ws, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil || res.ExitCode != 126 || !strings.Contains(string(res.Stderr), "Permission denied") {
			t.Errorf("./a.out without allow_exec_write_paths: %v, exit %d, %s", err, res.ExitCode, res.Stderr)
		}
	})

	t.Run("go run", func(t *testing.T) {
		// The go command builds in GOTMPDIR (the run's private directory)
		// and runs the result from there, with its compiler and linker
		// from GOROOT/pkg/tool: the exec grant of GOROOT/bin covers
		// them, and allow_exec_write_paths the program it built.
		goCmd, err := exec.LookPath("go")
		if err != nil {
			t.Skipf("no go command here: %v", err)
		}
		goCmd, _ = filepath.EvalSymlinks(goCmd)
		goroot := filepath.Dir(filepath.Dir(goCmd))
		e := newToolchainEnv(t)
		os.WriteFile(filepath.Join(e.ws, "hello.go"), []byte("package main\n\nfunc main() { println(\"hello from go run\") }\n"), 0o644)
		cfg := toolchainCfg(e.ws)
		cfg.AllowedExecPaths = append(cfg.AllowedExecPaths, filepath.Dir(goCmd))
		cfg.AllowedReadPaths = []string{goroot}
		cfg.AllowExecWritePaths = true
		_, errOut := e.sh(t, cfg, `PATH=`+filepath.Dir(goCmd)+`:$PATH GOTOOLCHAIN=local GOTELEMETRY=off go run hello.go`)
		if !strings.Contains(errOut, "hello from go run\n") {
			t.Errorf("go run: stderr %s", errOut)
		}
	})

	t.Run("make", func(t *testing.T) {
		need(t, "/usr/bin/make", "make")
		e := newToolchainEnv(t)
		os.WriteFile(filepath.Join(e.ws, "Makefile"), []byte("out.txt: in.txt\n\ttr a-z A-Z < in.txt > out.txt\n"), 0o644)
		os.WriteFile(filepath.Join(e.ws, "in.txt"), []byte("made\n"), 0o644)
		out, _ := e.sh(t, toolchainCfg(e.ws), `make -s && cat out.txt`)
		if !strings.HasPrefix(out, "MADE\n") {
			t.Errorf("make: %s", out)
		}
	})

	t.Run("bash here-document 100 KiB", func(t *testing.T) {
		need(t, "/usr/bin/bash", "bash")
		e := newToolchainEnv(t)
		// Bash writes a here-document larger than a pipe to a file in
		// TMPDIR; without a writable one it became empty input.
		line := strings.Repeat("x", 1023) + "\n"
		doc := strings.Repeat(line, 100)
		out, _ := e.sh(t, toolchainCfg(e.ws), "bash -c 'wc -c <<\"EOF\"\n"+doc+"EOF\n'")
		if !strings.HasPrefix(out, "102400\n") {
			t.Errorf("here-document byte count: %q", strings.SplitN(out, "\n", 2)[0])
		}
	})

	t.Run("sort a large input", func(t *testing.T) {
		need(t, "/usr/bin/sort", "coreutils")
		e := newToolchainEnv(t)
		out, _ := e.sh(t, toolchainCfg(e.ws), `seq 2000000 | sort -n | tail -1`)
		if !strings.HasPrefix(out, "2000000\n") {
			t.Errorf("seq | sort | tail: %q", strings.SplitN(out, "\n", 2)[0])
		}
	})

	t.Run("mktemp", func(t *testing.T) {
		need(t, "/usr/bin/mktemp", "coreutils")
		e := newToolchainEnv(t)
		out, _ := e.sh(t, toolchainCfg(e.ws), `f=$(mktemp) && echo "MKTEMP=$f" && echo data > "$f" && case "$f" in "$TMPDIR"/*) echo in-tmpdir;; esac`)
		if !strings.Contains(out, "in-tmpdir\n") {
			t.Errorf("mktemp: %s", out)
		}
	})
}
