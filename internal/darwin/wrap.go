package darwin

// How WrapCommand rewrites a command to run under a macOS profile, and what
// Probe and ApplySelf say on macOS. Pure apart from resolving the program
// and the Config's paths.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// command rewrites cmd to run its program under the profile for rc
// through /usr/bin/sandbox-exec: cmd.Path becomes seatbelt.SandboxExecPath and
// cmd.Args become
//
//	sandbox-exec -p PROFILE -D NAME=VALUE … -- TARGET ARGS…
//
// where TARGET is cmd.Path made absolute (relative to cmd.Dir) with symlinks
// resolved, and ARGS are cmd.Args[1:] verbatim. TARGET (and its "#!"
// interpreter) joins the profile's exec allowlist; a TARGET inside a write
// path is refused unless Config.AllowExecWritePaths or an exec path covers
// it (writableTarget). cmd.Env, when set, is the environment the xcrun
// shims' developer directory is looked up in (DEVELOPER_DIR). Nothing else
// in cmd is touched. On any error cmd is left as it was. Whether
// sandbox-exec exists is the caller's question (WrapCommand); Strict is
// checked here.
func command(cmd *exec.Cmd, rc *spec.Resolved) error {
	if cmd == nil {
		return errors.New("sandbox: WrapCommand: nil *exec.Cmd")
	}
	if cmd.Process != nil {
		return errors.New("sandbox: WrapCommand: command already started")
	}
	if cmd.Err != nil {
		return fmt.Errorf("sandbox: WrapCommand: %w", cmd.Err)
	}
	if rc.Config.Strict {
		if err := Plan(rc, true).StrictError(spec.ScopeCommand, rc.Config.StrictAccepts()...); err != nil {
			return err
		}
	}
	target, err := commandTarget(cmd)
	if err != nil {
		return err
	}
	if err := writableTarget(rc, target); err != nil {
		return err
	}
	if cmd.Env != nil {
		rc.Env = cmd.Env
	}
	prof, err := profile(rc, pathRules(rc, target))
	if err != nil {
		return err
	}
	var args []string
	if len(cmd.Args) > 1 {
		args = cmd.Args[1:]
	}
	argv := append([]string{seatbelt.SandboxExecPath}, prof.Args(target, args...)...)
	cmd.Path, cmd.Args = seatbelt.SandboxExecPath, argv
	return nil
}

// commandTarget resolves the program cmd would run: cmd.Path, relative to
// cmd.Dir when relative (as exec.Cmd does), absolute, symlinks resolved. It
// must be an executable regular file, and not sandbox-exec itself (a command
// wrapped twice: sandbox-exec cannot start inside a sandbox).
func commandTarget(cmd *exec.Cmd) (string, error) {
	p := cmd.Path
	if p == "" {
		return "", errors.New("sandbox: WrapCommand: cmd.Path is empty")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cmd.Dir, p)
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: WrapCommand: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: WrapCommand: program: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("sandbox: WrapCommand: program: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", &fs.PathError{Op: "WrapCommand", Path: resolved, Err: errors.New("not an executable regular file")}
	}
	if resolved == seatbelt.SandboxExecPath {
		return "", errors.New("sandbox: WrapCommand: the command already runs " + seatbelt.SandboxExecPath +
			" (wrapped twice?); sandbox-exec cannot start inside a sandbox")
	}
	return resolved, nil
}

// writableTarget refuses a target inside a write path: its literal exec
// grant would let the program replace the file with another program and
// run that, as no exec grant lets it otherwise. Config.AllowExecWritePaths
// grants that anyway, and so does an exec path that covers the target.
func writableTarget(rc *spec.Resolved, target string) error {
	if rc.Config.AllowExecWritePaths {
		return nil
	}
	t := canonicalPath(target)
	for _, x := range rc.Exec {
		if r := canonicalPath(x.Resolved); t == r || x.IsDir && spec.Under(t, r) {
			return nil
		}
	}
	for _, w := range rc.Write {
		if r := canonicalPath(w.Resolved); spec.Under(t, r) {
			return fmt.Errorf("%w: WrapCommand: the program %s is inside the write path %s, where the sandboxed program could replace it "+
				"with another and run that: set allow_exec_write_paths, or grant it (or its directory) in allowed_exec_paths", spec.ErrInvalidConfig, target, w.Resolved)
		}
	}
	return nil
}

// WrapCommand is sandbox's WrapCommand on macOS, and Run's wrap: cfg is
// validated first (*spec.ConfigError), then sandboxExec (the result of
// checkSandboxExec, [SandboxExec] on macOS) must be nil
// (spec.ErrUnavailable), then cmd is rewritten by command. cmd is left as it
// was on any error.
//
// terminal is "" but for Run, which may have opened a pseudo-terminal for the
// program (terminal, its /dev/ttysNNN path) and made it the program's
// controlling terminal (setsid, TIOCSCTTY): the profile then grants ioctl on
// exactly it, and on /dev/tty (which names the controlling terminal), as on
// no other terminal. Only Run's own terminal, made the controlling one, may
// be passed: a terminal the caller uses would let the program push input
// into it (TIOCSTI).
func WrapCommand(cmd *exec.Cmd, cfg spec.Config, sandboxExec error, terminal string) error {
	rc, err := spec.Resolve(cfg)
	if err != nil {
		return err
	}
	rc.Terminal = terminal
	if err := spec.RefuseViews(cfg, "WrapCommand on darwin", "macOS has none (Seatbelt can deny paths, not show them elsewhere)"); err != nil {
		return err
	}
	if sandboxExec != nil {
		return fmt.Errorf("%w: %w", spec.ErrUnavailable, sandboxExec)
	}
	return command(cmd, rc)
}

// checkSandboxExec reports why path is not a usable sandbox-exec: missing,
// not a regular file, or not executable. It only stats the file.
func checkSandboxExec(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s not found: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// trialArgs are sandbox-exec's arguments for the trial run Probe
// makes: a profile that allows everything, so that only applying a profile
// at all can fail.
var trialArgs = []string{"-p", "(version 1)\n(allow default)\n", "--", "/usr/bin/true"}

// trialFailure is the error of a trial run that failed: sandbox-exec
// is there but cannot apply a profile.
type trialFailure struct{ msg string }

func (e *trialFailure) Error() string { return e.msg }

// trialError turns the trial run's outcome (err from exec.Cmd.Run and
// what sandbox-exec wrote to stderr) into nil or the reason no command can
// be wrapped here.
func trialError(err error, stderr string) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(stderr)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if strings.Contains(msg, "forbidden-sandbox-reinit") || strings.Contains(msg, "sandbox_apply") && strings.Contains(msg, "Operation not permitted") {
		return &trialFailure{fmt.Sprintf("%s cannot apply a profile: this process already runs inside a Seatbelt sandbox "+
			"(forbidden-sandbox-reinit), where no command can be wrapped: %s", seatbelt.SandboxExecPath, msg)}
	}
	if msg != "" {
		return &trialFailure{fmt.Sprintf("%s failed a trial run with a trivial profile: %v: %s", seatbelt.SandboxExecPath, err, msg)}
	}
	return &trialFailure{fmt.Sprintf("%s failed a trial run with a trivial profile: %v", seatbelt.SandboxExecPath, err)}
}

// Status is Probe on macOS, given checkSandboxExec's answer (or the trial
// run's, [SandboxExec]): active, enforcing files and network, only when
// sandboxExec is nil; otherwise the reason, with a note that nothing can be
// sandboxed without sandbox-exec unless it failed only its trial run.
func Status(sandboxExec error) spec.Status {
	var trial *trialFailure
	if errors.As(sandboxExec, &trial) {
		return spec.Status{Mode: spec.ModeSandboxExec, Reason: sandboxExec.Error()}
	}
	if sandboxExec != nil {
		return spec.Status{Mode: spec.ModeSandboxExec, Reason: sandboxExec.Error() +
			": sandbox-exec ships with every macOS release; nothing can be sandboxed without it"}
	}
	return spec.Status{Active: true, Mode: spec.ModeSandboxExec, Filesystem: true, Network: true,
		Reason: hostLimit + "; " + noApplySelf}
}

// ApplySelfError is ApplySelf's error on macOS: it matches
// spec.ErrUnavailable and says to use WrapCommand and VerifyCanaryFor.
func ApplySelfError() error {
	return fmt.Errorf("%w: %s (macOS offers no public API for a running process to apply a Seatbelt profile "+
		"to itself, and this library does not use cgo)", spec.ErrUnavailable, noApplySelf)
}

// RunEnv is env for a program Run starts on macOS, where Run has already
// set TMPDIR to the tmp directory inside its private directory (and HOME
// beside it unless the caller set HOME): GIT_CONFIG_GLOBAL becomes
// TMPDIR/.gitconfig (which does not exist) and GIT_CONFIG_NOSYSTEM 1, each
// only when env does not set it already, and GIT_CONFIG_GLOBAL only when
// env has a TMPDIR. Seatbelt answers even access(2) outside the granted
// paths with EPERM, and git dies on any error but ENOENT, ENOTDIR (and,
// for some files, EACCES, which is what Linux gives) when it looks for
// ~/.gitconfig or /etc/gitconfig; GIT_CONFIG_GLOBAL keeps git away from the
// real home even when the caller passes HOME.
func RunEnv(env []string) []string {
	out := slices.Clone(env)
	lookup := func(key string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], key+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	if _, ok := lookup("GIT_CONFIG_GLOBAL"); !ok {
		if tmp, ok := lookup("TMPDIR"); ok && tmp != "" {
			out = append(out, "GIT_CONFIG_GLOBAL="+strings.TrimSuffix(tmp, "/")+"/.gitconfig")
		}
	}
	if _, ok := lookup("GIT_CONFIG_NOSYSTEM"); !ok {
		out = append(out, "GIT_CONFIG_NOSYSTEM=1")
	}
	return out // never nil: it holds GIT_CONFIG_NOSYSTEM at least, or env's own
}
