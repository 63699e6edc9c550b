package darwin

// WrapCommand's rewrite on macOS, Probe's status and ApplySelf's error, as
// data on every OS.

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// testTool makes an executable file (not a script) and a symlink to it.
func testTool(t *testing.T, dir string) (tool, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	tool = filepath.Join(dir, "bin", "tool")
	if err := os.WriteFile(tool, []byte("\xcf\xfa\xed\xfe not really Mach-O"), 0o755); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(dir, "tool-link")
	if err := os.Symlink(tool, link); err != nil {
		t.Fatal(err)
	}
	return tool, link
}

func TestDarwinCommand(t *testing.T) {
	dir := safeDir(t)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	tool, link := testTool(t, dir)
	rc, err := spec.Resolve(spec.Config{AllowedWritePaths: []string{ws}, AllowedTCPConnect: []string{"example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}

	extra, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	var stdout bytes.Buffer
	stdin := strings.NewReader("input")
	sys := &syscall.SysProcAttr{}
	cmd := exec.Command(link, "a", "b c", "--", "-p", "")
	cmd.Dir, cmd.Env = ws, []string{"A=1"}
	cmd.Stdin, cmd.Stdout, cmd.ExtraFiles, cmd.SysProcAttr = stdin, &stdout, []*os.File{extra}, sys

	if err := command(cmd, rc); err != nil {
		t.Fatal(err)
	}
	if cmd.Path != "/usr/bin/sandbox-exec" {
		t.Errorf("Path = %q", cmd.Path)
	}
	prof, err := profile(rc, pathRules(rc, tool))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/sandbox-exec", "-p", prof.Text}
	for _, p := range prof.Params {
		want = append(want, "-D", p.Name+"="+p.Value)
	}
	want = append(want, "--", tool, "a", "b c", "--", "-p", "")
	if !slices.Equal(cmd.Args, want) {
		t.Errorf("Args =\n%q\nwant\n%q", cmd.Args, want)
	}
	if !slices.Contains(cmd.Args, "X0="+tool) || !strings.Contains(cmd.Args[2], `(allow process-exec* (literal (param "X0")))`) {
		t.Errorf("the resolved target is not on the exec allowlist: %q", cmd.Args[3:])
	}
	if !slices.Contains(cmd.Args, "W0="+ws) {
		t.Errorf("workspace parameter missing: %q", cmd.Args[3:])
	}
	if cmd.Dir != ws || !slices.Equal(cmd.Env, []string{"A=1"}) || cmd.Stdin != stdin || cmd.Stdout != &stdout ||
		len(cmd.ExtraFiles) != 1 || cmd.ExtraFiles[0] != extra || cmd.SysProcAttr != sys || cmd.Stderr != nil {
		t.Error("Dir, Env, stdio, ExtraFiles or SysProcAttr changed")
	}

	// A relative Path is relative to Dir; no Args means no arguments.
	cmd = &exec.Cmd{Path: filepath.Join("bin", "tool"), Dir: dir}
	if err := command(cmd, rc); err != nil {
		t.Fatal(err)
	}
	if got := cmd.Args[len(cmd.Args)-2:]; !slices.Equal(got, []string{"--", tool}) {
		t.Errorf("relative path: argv ends %q, want -- %s", got, tool)
	}

	// A target inside an exec directory needs no rule of its own.
	rcDir, err := spec.Resolve(spec.Config{AllowedExecPaths: []string{filepath.Join(dir, "bin")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pathRules(rcDir, tool) {
		if p.Source == "WrapCommand target" {
			t.Errorf("target covered by an exec directory got its own rule: %+v", p)
		}
	}
}

func TestDarwinCommandScriptInterpreter(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil || privatePath(sh) != sh {
		t.Skip("no /bin/sh usable in a profile here")
	}
	dir := safeDir(t)
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh -e\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	paths := pathRules(&spec.Resolved{}, script)
	if len(paths) != 2 || paths[0].Resolved != script || paths[1].Resolved != sh ||
		paths[1].Access != accessExec || paths[1].Source != "interpreter of "+script {
		t.Errorf("script rules: %+v, want the script and %s as its interpreter", paths, sh)
	}
	// A script inside an exec directory: no rule of its own, but its
	// interpreter is still granted.
	rcDir, err := spec.Resolve(spec.Config{AllowedExecPaths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	paths = pathRules(rcDir, script)
	if len(paths) != 2 || paths[0].Resolved != dir || paths[1].Resolved != sh {
		t.Errorf("script in an exec directory: %+v, want the directory and %s", paths, sh)
	}
	cmd := exec.Command(script)
	if err := command(cmd, &spec.Resolved{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cmd.Args, "X1="+sh) {
		t.Errorf("interpreter not passed as an exec parameter: %q", cmd.Args[3:])
	}
}

func TestDarwinCommandErrorsLeaveCmd(t *testing.T) {
	dir := safeDir(t)
	_, link := testTool(t, dir)
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	good := spec.Config{AllowedReadPaths: []string{dir}}
	started := exec.Command(link)
	started.Process, _ = os.FindProcess(os.Getpid())
	cases := []struct {
		name    string
		cmd     *exec.Cmd
		cfg     spec.Config
		sbxErr  error
		wantErr error
	}{
		{"bad config", exec.Command(link), spec.Config{AllowedReadPaths: []string{"relative"}}, nil, spec.ErrInvalidConfig},
		{"missing path", exec.Command(link), spec.Config{AllowedReadPaths: []string{filepath.Join(dir, "nope")}}, nil, spec.ErrInvalidConfig},
		{"no sandbox-exec", exec.Command(link), good, errors.New("/usr/bin/sandbox-exec not found"), spec.ErrUnavailable},
		{"strict named host", exec.Command(link), spec.Config{Strict: true, AllowedTCPConnect: []string{"example.com:443"}}, nil, spec.ErrNotEnforced},
		{"lookup failed", exec.Command("no-such-command-for-sandbox-tests"), good, nil, exec.ErrNotFound},
		{"started", started, good, nil, nil},
		{"directory", &exec.Cmd{Path: dir, Args: []string{"x"}}, good, nil, nil},
		{"not executable", &exec.Cmd{Path: plain, Args: []string{"plain"}}, good, nil, nil},
		{"missing program", &exec.Cmd{Path: filepath.Join(dir, "nope"), Args: []string{"nope"}}, good, nil, fs.ErrNotExist},
		{"empty path", &exec.Cmd{}, good, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, args := c.cmd.Path, slices.Clone(c.cmd.Args)
			err := wrapCommand(c.cmd, c.cfg, c.sbxErr)
			if err == nil {
				t.Fatal("no error")
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("error %v, want %v", err, c.wantErr)
			}
			if c.cmd.Path != path || !slices.Equal(c.cmd.Args, args) {
				t.Errorf("cmd changed on error: %q %q", c.cmd.Path, c.cmd.Args)
			}
		})
	}
	if err := wrapCommand(nil, good, nil); err == nil {
		t.Error("nil cmd: no error")
	}
	// Strict with hosts Seatbelt can express works.
	cmd := exec.Command(link)
	if err := wrapCommand(cmd, spec.Config{Strict: true, AllowedTCPConnect: []string{"127.0.0.1:443", "localhost:80"}}, nil); err != nil {
		t.Errorf("strict with enforceable hosts: %v", err)
	}
}

func TestDarwinStatus(t *testing.T) {
	st := Status(nil)
	want := spec.Status{Active: true, Mode: "sandbox-exec", Filesystem: true, Network: true,
		Reason: `Seatbelt network rules take only "localhost" or "*" as host: a TCP endpoint with any other host is enforced by port only (as *:PORT); ` +
			`ApplySelf is not available on macOS: start the process with WrapCommand (sandbox-exec) and verify it with VerifyCanaryFor`}
	if st != want {
		t.Errorf("active status\n%+v\nwant\n%+v", st, want)
	}
	st = Status(errors.New("/usr/bin/sandbox-exec not found: no such file"))
	if st.Active || st.Filesystem || st.Network || st.Mode != spec.ModeSandboxExec || !strings.HasPrefix(st.Reason, "/usr/bin/sandbox-exec not found") {
		t.Errorf("inactive status %+v", st)
	}

}

func TestCheckSandboxExec(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no execute permission bits on Windows to check sandbox-exec's against")
	}
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "exe"), filepath.Join(dir, "plain")
	os.WriteFile(exe, nil, 0o755)
	os.WriteFile(plain, nil, 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "missing"): "not found",
		dir:                           "not a regular file",
		plain:                         "not executable",
		exe:                           "",
	} {
		err := checkSandboxExec(path)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("checkSandboxExec(%s) = %v, want %q", path, err, want)
		}
	}
}

func TestDarwinApplySelfError(t *testing.T) {
	err := ApplySelfError()
	if !errors.Is(err, spec.ErrUnavailable) {
		t.Fatalf("%v does not match ErrUnavailable", err)
	}
	for _, s := range []string{"WrapCommand", "sandbox-exec", "VerifyCanaryFor"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not mention %s", err, s)
		}
	}
}

// TestDarwinRunTerminal: Run's own pseudo-terminal, and only it, gets the
// ioctl grant (seatbelt.Policy.Terminal); WrapCommand never grants one, and
// a path that is not a pseudo-terminal's fails the wrap, leaving cmd as it
// was.
func TestDarwinRunTerminal(t *testing.T) {
	dir := safeDir(t)
	_, link := testTool(t, dir)
	const rule = `(allow file-read* file-write-data file-ioctl (literal (param "T0")))`
	cmd := exec.Command(link)
	if err := wrapCommand(cmd, spec.Config{}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cmd.Args[2], "file-ioctl") || slices.ContainsFunc(cmd.Args, func(a string) bool { return strings.HasPrefix(a, "T0=") }) {
		t.Errorf("WrapCommand granted an ioctl:\n%s", cmd.Args[2])
	}
	cmd = exec.Command(link)
	if err := WrapCommand(cmd, spec.Config{}, nil, "/dev/ttys007"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmd.Args[2], rule) || !slices.Contains(cmd.Args, "T0=/dev/ttys007") {
		t.Errorf("Run's terminal not granted (want %s and T0=/dev/ttys007): %q", rule, cmd.Args[3:])
	}
	cmd = exec.Command(link)
	if err := WrapCommand(cmd, spec.Config{}, nil, "/dev/console"); err == nil || cmd.Path != link {
		t.Errorf("a terminal that is not a pseudo-terminal: err %v, Path %q", err, cmd.Path)
	}
}

// wrapCommand is WrapCommand as sandbox's WrapCommand calls it: no terminal.
func wrapCommand(cmd *exec.Cmd, cfg spec.Config, sandboxExec error) error {
	return WrapCommand(cmd, cfg, sandboxExec, "")
}
