//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// hintCase is one row of hintRules tested with the real program: it runs
// under sandbox.Run as `sandbox run` runs it, its own output is explained,
// and then, where the hint names a flag, the flag is given and the
// denial must be gone (the hint helped) and the hint with it (it is not
// suggested again).
type hintCase struct {
	rule   string   // the row of hintRules this message belongs to
	name   string   // the case
	needs  []string // programs (absolute paths) the case runs
	root   bool     // the message exists only as root
	setup  func(t *testing.T, ws string)
	cfg    func(c *sandbox.Config)
	env    func(ws string) []string
	argv   func(ws string) []string
	msg    string   // a substring of the real message
	want   string   // a substring of one hint
	refuse []string // substrings no hint may have
	fix    func(c *sandbox.Config)
}

func hintCases() []hintCase {
	sh := func(script string) func(string) []string {
		return func(string) []string { return []string{"/bin/sh", "-c", script} }
	}
	writeFile := func(t *testing.T, p, s string, mode os.FileMode) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	buildSO := func(t *testing.T, ws, name string) {
		t.Helper()
		writeFile(t, filepath.Join(ws, "e.c"), "int f(void) { return 1; }\n", 0o644)
		if out, err := exec.Command("/usr/bin/gcc", "-shared", "-fPIC", "-o", filepath.Join(ws, name), filepath.Join(ws, "e.c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	tarOf := func(t *testing.T, ws string, uid int) {
		t.Helper()
		src := t.TempDir()
		os.Mkdir(filepath.Join(src, "d"), 0o755)
		os.Symlink("x", filepath.Join(src, "d", "l"))
		id := strconv.Itoa(uid)
		if out, err := exec.Command("/usr/bin/tar", "-C", src, "--owner="+id, "--group="+id, "-czf", filepath.Join(ws, "a.tgz"), "d").CombinedOutput(); err != nil {
			t.Fatalf("tar c: %v\n%s", err, out)
		}
	}
	gitInit := func(t *testing.T, ws string) {
		t.Helper()
		if out, err := exec.Command("/usr/bin/git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	execRW := func(c *sandbox.Config) { c.AllowExecWritePaths = true }
	return []hintCase{
		{rule: "exec below the program", name: "make runs what it built", needs: []string{"/usr/bin/make", "/usr/bin/gcc"},
			setup: func(t *testing.T, ws string) {
				writeFile(t, filepath.Join(ws, "app.c"), "int main(void) { return 0; }\n", 0o644)
				writeFile(t, filepath.Join(ws, "Makefile"), "test: app\n\t./app\napp: app.c\n\tgcc -o app app.c\n", 0o644)
			},
			argv: func(string) []string { return []string{"/usr/bin/make", "test"} },
			msg:  "make: ./app: Permission denied", want: "--allow-exec-rw", fix: execRW},
		{rule: "exec below the program", name: "go test runs its test binary", needs: []string{"go"},
			setup: func(t *testing.T, ws string) {
				writeFile(t, filepath.Join(ws, "go.mod"), "module example.invalid/m\n\ngo 1.22\n", 0o644)
				writeFile(t, filepath.Join(ws, "m_test.go"), "package m\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) {}\n", 0o644)
			},
			cfg: func(c *sandbox.Config) {
				bin, root := goDirs()
				c.AllowedExecPaths = append(c.AllowedExecPaths, bin)
				c.AllowedReadPaths = append(c.AllowedReadPaths, root)
			},
			env: func(string) []string {
				bin, _ := goDirs()
				return []string{"PATH=" + bin + ":/usr/bin:/bin", "GOTOOLCHAIN=local"}
			},
			argv: func(string) []string { return []string{"go", "test", "."} },
			msg:  "fork/exec ", want: "private temporary directory", fix: execRW},
		{rule: "exec below the program", name: "npm runs a script", needs: []string{"/usr/bin/npm"},
			setup: func(t *testing.T, ws string) {
				writeFile(t, filepath.Join(ws, "package.json"), `{"name":"x","version":"1.0.0","scripts":{"test":"./x"}}`, 0o644)
				writeFile(t, filepath.Join(ws, "x"), "#!/bin/sh\necho ran\n", 0o755)
			},
			argv: func(string) []string { return []string{"/usr/bin/npm", "test"} },
			msg:  "./x: Permission denied", want: "--allow-exec-rw", fix: execRW},
		{rule: "exec below the program", name: "bash runs a script", needs: []string{"/bin/bash"},
			setup: func(t *testing.T, ws string) { writeFile(t, filepath.Join(ws, "x"), "#!/bin/sh\necho ran\n", 0o755) },
			argv:  func(string) []string { return []string{"/bin/bash", "-c", "./x; exit 1"} },
			msg:   "./x: Permission denied", want: "--allow-exec-rw", fix: execRW},
		{rule: "native extension in a write path", name: "python3 loads a shared object", needs: []string{"/usr/bin/python3", "/usr/bin/gcc"},
			setup: func(t *testing.T, ws string) { buildSO(t, ws, "e.so") },
			argv: func(string) []string {
				return []string{"/usr/bin/python3", "-c", `import ctypes; ctypes.CDLL("./e.so")`}
			},
			msg: "failed to map segment from shared object", want: "--allow-exec-rw", fix: execRW},
		{rule: "native extension in a write path", name: "node loads a .node addon", needs: []string{"/usr/bin/node", "/usr/bin/gcc"},
			setup: func(t *testing.T, ws string) { buildSO(t, ws, "e.node") },
			argv:  func(string) []string { return []string{"/usr/bin/node", "-e", `require("./e.node")`} },
			msg:   "failed to map segment from shared object", want: "native extension", fix: execRW},
		{rule: "protected git path", name: "git remote add", needs: []string{"/usr/bin/git"},
			setup: gitInit,
			argv: func(string) []string {
				return []string{"/usr/bin/git", "remote", "add", "origin", "https://example.invalid/x"}
			},
			msg: "Device or resource busy", want: "outside the sandbox",
			refuse: []string{"--rw", "--no-git-protection"}},
		{rule: "protected git path", name: "a hook written by the shell", needs: []string{"/usr/bin/git"},
			setup: gitInit,
			argv:  sh("echo 'echo hi' > .git/hooks/pre-commit"),
			msg:   "Read-only file system", want: "hooks and config",
			refuse: []string{"--rw", "--no-git-protection"}},
		{rule: "read-only as the Config asked", name: "a --deny-write path", needs: []string{"/usr/bin/touch"},
			setup: func(t *testing.T, ws string) { os.Mkdir(filepath.Join(ws, "ro"), 0o755) },
			cfg:   func(c *sandbox.Config) { c.DenyWritePaths = []string{filepath.Join(c.AllowedWritePaths[0], "ro")} },
			argv:  func(string) []string { return []string{"/usr/bin/touch", "ro/f"} },
			msg:   "Read-only file system", want: "--deny-write", refuse: []string{"--rw", ":rw"}},
		{rule: "read-only as the Config asked", name: "a --mount without :rw", needs: []string{"/usr/bin/touch"},
			setup: func(t *testing.T, ws string) {
				os.Mkdir(filepath.Join(ws, "m"), 0o755)
				os.Mkdir(filepath.Join(filepath.Dir(ws), "mount-src"), 0o755) // in the test's own temporary directory
			},
			cfg: func(c *sandbox.Config) {
				ws := c.AllowedWritePaths[0]
				c.Mounts = []sandbox.Mount{{Path: filepath.Join(filepath.Dir(ws), "mount-src"), At: filepath.Join(ws, "m")}}
			},
			argv: func(string) []string { return []string{"/usr/bin/touch", "m/f"} },
			msg:  "Read-only file system", want: ":rw lets", fix: func(c *sandbox.Config) { c.Mounts[0].Write = true }},
		{rule: "restoring another owner", name: "tar as root restoring another user", needs: []string{"/usr/bin/tar"}, root: true,
			setup: func(t *testing.T, ws string) { tarOf(t, ws, 1234) },
			argv:  func(string) []string { return []string{"/usr/bin/tar", "--same-owner", "-xzf", "a.tgz"} },
			msg:   "Cannot change ownership to uid 1234", want: "--no-same-owner",
			refuse: []string{"--allow-chown grants"}},
		{rule: "restoring another owner", name: "tar restoring the caller's own owner", needs: []string{"/usr/bin/tar"},
			setup: func(t *testing.T, ws string) { tarOf(t, ws, os.Geteuid()) },
			argv:  func(string) []string { return []string{"/usr/bin/tar", "--same-owner", "-xzf", "a.tgz"} },
			msg:   "Cannot change ownership to uid " + strconv.Itoa(os.Geteuid()), want: "--allow-chown",
			fix: func(c *sandbox.Config) { c.AllowChown = true }},
		{rule: "pip refusing the system's Python", name: "an activated venv's pip", needs: []string{"/usr/bin/python3", "/usr/bin/pip3"},
			setup: makeVenv,
			env: func(ws string) []string {
				return []string{"PATH=" + ws + "/venv/bin:/usr/bin:/bin", "VIRTUAL_ENV=" + ws + "/venv"}
			},
			argv: sh("pip install --no-index nothing-here"),
			msg:  "externally-managed-environment", want: "-m pip"},
	}
}

// goDirs returns the go command's directory and its GOROOT ("" without go).
func goDirs() (bin, root string) {
	p, err := exec.LookPath("go")
	if err != nil {
		return "", ""
	}
	p, _ = filepath.EvalSymlinks(p)
	return filepath.Dir(p), filepath.Dir(filepath.Dir(p))
}

// makeVenv makes ws/venv with /usr/bin/python3, or skips where it cannot.
func makeVenv(t *testing.T, ws string) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import ensurepip").Run() != nil {
		t.Skip("python3 has no ensurepip here (Debian package python3-venv): no venv")
	}
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", filepath.Join(ws, "venv")).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
}

// TestExplainRealPrograms runs every row's real program under Run.
func TestExplainRealPrograms(t *testing.T) {
	linuxSandbox(t)
	covered := map[string]bool{}
	for _, c := range hintCases() {
		covered[c.rule] = true
		t.Run(c.name, func(t *testing.T) {
			for _, p := range c.needs {
				if _, err := exec.LookPath(p); err != nil {
					t.Skipf("%s is not installed here: %v", p, err)
				}
			}
			if c.root && os.Geteuid() != 0 {
				t.Skip("this message exists only as root")
			}
			ws, _ := filepath.EvalSymlinks(t.TempDir())
			cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true}
			if c.setup != nil {
				c.setup(t, ws)
			}
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			env := []string{"PATH=/usr/bin:/bin"}
			if c.env != nil {
				env = c.env(ws)
			}
			out, hints := explainRun(t, cfg, ws, env, c.argv(ws))
			if !strings.Contains(out, c.msg) {
				t.Fatalf("the program did not print %q (has it changed its message?):\n%s", c.msg, out)
			}
			all := strings.Join(hints, "\n")
			t.Logf("hints: %q", hints)
			if !slices.ContainsFunc(hints, func(h string) bool { return strings.Contains(h, c.want) }) {
				t.Errorf("hints %q, want one containing %q, for:\n%s", hints, c.want, out)
			}
			for _, r := range c.refuse {
				if strings.Contains(all, r) {
					t.Errorf("hints %q suggest %q", hints, r)
				}
			}
			if c.fix == nil {
				return
			}
			c.fix(&cfg)
			os.RemoveAll(filepath.Join(ws, "d")) // tar's output, if any
			out2, hints2 := explainRun(t, cfg, ws, env, c.argv(ws))
			if strings.Contains(out2, c.msg) {
				t.Errorf("with the flag the hint named, the denial is still there:\n%s", out2)
			}
			if slices.ContainsFunc(hints2, func(h string) bool { return strings.Contains(h, c.want) }) {
				t.Errorf("with the flag given, it is still suggested: %q", hints2)
			}
		})
	}
	for _, r := range hintRules {
		if !covered[r.name] {
			t.Errorf("row %q of hintRules has no case with a real program", r.name)
		}
	}
}

// explainRun runs argv in ws under cfg and returns its output and hints.
func explainRun(t *testing.T, cfg sandbox.Config, ws string, env, argv []string) (string, []string) {
	t.Helper()
	if filepath.Base(argv[0]) == argv[0] {
		// Found in the program's PATH, as `sandbox run` does.
		for _, kv := range env {
			if p, ok := strings.CutPrefix(kv, "PATH="); ok {
				t.Setenv("PATH", p)
			}
		}
	}
	res, err := sandbox.Run(context.Background(), cfg, argv[0], argv[1:], sandbox.RunOptions{Dir: ws, Env: env, Timeout: 3 * time.Minute})
	if err != nil && res.ExitCode < 0 {
		t.Fatalf("%q: %v", argv, err)
	}
	home, _ := os.UserHomeDir()
	return string(res.Stdout) + string(res.Stderr), explain(res, err, hintContext{cfg: cfg, home: home, cwd: ws, env: env})
}

// TestRunVenv: a venv made with /usr/bin/python3 in a write path works
// with the obvious grants (--exec /usr/bin covers the interpreter its
// bin/python3 links to): its pip, run directly or as python -m pip, is the
// venv's. A venv whose interpreter --exec does not cover gets no grant from
// the link: the pip hint names the interpreter.
func TestRunVenv(t *testing.T) {
	linuxSandbox(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skipf("no /usr/bin/python3 here: %v", err)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	makeVenv(t, ws)
	venv := filepath.Join(ws, "venv")
	for _, argv := range [][]string{
		{venv + "/bin/pip", "--version"},
		{"/bin/sh", "-c", venv + "/bin/python -m pip --version"},
	} {
		out, errOut, code := runCLI(t, append([]string{"run", "--rw", ws, "--exec", "/usr/bin", "--exec", "/bin", "--allow-spawn", "--"}, argv...)...)
		if code != 0 || !strings.Contains(out, "from "+venv+"/lib/") {
			t.Errorf("%q: exit %d, stdout %q (want the venv's pip), stderr %s", argv, code, out, errOut)
		}
	}

	// An interpreter outside the exec grants: named, not granted.
	other, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(other, "v", "bin"), 0o755)
	os.WriteFile(filepath.Join(other, "v", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	target, _ := filepath.EvalSymlinks("/usr/bin/python3")
	os.Symlink(target, filepath.Join(other, "v", "bin", "python3"))
	hc := hintContext{cfg: sandbox.Config{AllowedWritePaths: []string{other}, AllowedExecPaths: []string{"/usr/local/bin"}}, cwd: other}
	h := pipHint(nil, hc)
	if !strings.Contains(h, "--exec "+target) || strings.Contains(h, "--exec "+other) {
		t.Errorf("pip hint with the interpreter %s outside --exec: %q", target, h)
	}
}
