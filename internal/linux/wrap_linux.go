//go:build linux

package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spawnhelper"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// The Linux WrapCommand: a re-exec trampoline. See internal/trampoline for
// the child's side; this file is the parent's.

func init() {
	// internal/trampoline's init takes over every process that carries its
	// environment marker, long before this runs. A process that has the
	// trampoline's argv[0] but got here lost that environment (cmd.Env was
	// replaced after WrapCommand): running the host program's main in it
	// would run the host, unconfined, in place of the target.
	if len(os.Args) > 0 && os.Args[0] == trampoline.Arg0 {
		os.Stderr.WriteString("sandbox: started as a sandbox trampoline without its environment " +
			"(was cmd.Env replaced after WrapCommand?): refusing to run the host program\n")
		os.Exit(trampoline.ExitSetup)
	}
}

// selfExe is what the trampoline re-executes: the kernel's link to this
// process's executable, valid even if the file was replaced or deleted
// since the process started.
const selfExe = "/proc/self/exe"

// wrapOptions are the parts of a wrap only Run uses.
type wrapOptions struct {
	// failurePipe, when set, is the write end of a pipe appended to
	// cmd.ExtraFiles, on which the trampoline reports why it could not
	// start the target (it is close-on-exec in the child).
	failurePipe *os.File
	// denySetsid makes the seccomp filter refuse setsid(2), so that every
	// process of the tree stays in the session Run kills.
	denySetsid bool
	// denyPdeathsigChange makes the filter refuse PR_SET_PDEATHSIG with
	// anything but SIGKILL, so that the target keeps the parent-death
	// signal Run gives it.
	denyPdeathsigChange bool
	// killGroup asks for a cgroup for the tree even without limits, for a
	// race-free kill (Run, with AllowProcessSpawn), where one that can
	// freeze or kill the tree whole can be made and the tree gets no PID
	// namespace (which kills it whole: see pidNamespaceKills); without
	// either the caller falls back to its own kill.
	killGroup bool
	// group, when set, receives the tree's cgroup and limits (nil when
	// neither was asked for), which the caller must close.
	group **treeGroup
	// pidNS, when set (Run), asks for a PID namespace of the tree's own
	// where the tree needs a kill (AllowProcessSpawn) and namespaces are
	// available, and receives whether the child starts in one: as its
	// PID 1, so that the kernel kills every process of the namespace when
	// the program dies, also when the caller is killed (see Run's doc).
	pidNS *bool
	// git, when set, receives what the git checks after the command need
	// (see gitEnd): Run makes them once the tree is gone, FinishCommand
	// for WrapCommand's callers.
	git *gitEnd
	// check, when set (Run), sees the spawn's plan before it is applied
	// (SpawnOptions.Check).
	check spec.PlanCheck
}

// WrapCommand prepares cmd so that cmd.Start runs its program confined to
// cfg, which it resolves with spec.Resolve after the checks of cmd itself
// (sandbox.WrapCommand on Linux, whose doc comment, on the root's
// Sandbox interface, is the contract: exit codes 125/126/127, what may
// change after the call, FinishCommand). It returns what it set up beside
// the process (the tree's cgroup, the egress proxy, the git checks) as a
// [Command], which the caller ends once the command's tree is gone.
func WrapCommand(cmd *exec.Cmd, cfg spec.Config) (*Command, error) {
	var t *treeGroup
	var git gitEnd
	g, err := wrapLinux(cmd, cfg, wrapOptions{group: &t, git: &git})
	if err != nil {
		return nil, err
	}
	return newCommand(t, g, git), nil
}

// wrapLinux wraps cmd in a list of steps: the checks of cmd, the Config
// resolved, the target, the host's facts gathered, the spawn planned (and
// checked: Strict) by PlanSpawn, and the plan applied to cmd.
func wrapLinux(cmd *exec.Cmd, cfg spec.Config, opts wrapOptions) (g *EgressProc, err error) {
	if err := startable(cmd); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			// Fail closed: a Start after an ignored error must not run
			// the program unconfined.
			cmd.Err = err
		}
	}()
	if err := wrappable(cmd); err != nil {
		return nil, err
	}
	rc, err := spec.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Strict {
		strictStdio(cmd)
	}
	target, err := spawnTarget(cmd, opts)
	if err != nil {
		return nil, err
	}
	var w wrapHost
	host, err := w.gather(cmd, rc, target, opts)
	defer func() {
		if err != nil && w.resolvDir != "" {
			// The program's resolver asks the caller's, on a loopback
			// address (egress_transparent_linux.go); removed at the
			// egress's close, or here if WrapCommand fails.
			os.RemoveAll(w.resolvDir)
		}
	}()
	if err != nil {
		return nil, err
	}
	s, err := PlanSpawn(rc, target, host)
	if err != nil {
		return nil, err
	}
	return w.apply(cmd, rc, target, host, s, opts)
}

// startable checks that cmd can be wrapped at all (cmd.Err is not set for
// these: there is no command, or it has started).
func startable(cmd *exec.Cmd) error {
	if cmd == nil {
		return errors.New("sandbox: WrapCommand: nil *exec.Cmd")
	}
	if cmd.Process != nil {
		return errors.New("sandbox: WrapCommand: command already started")
	}
	return nil
}

// wrappable checks what of cmd the sandbox refuses.
func wrappable(cmd *exec.Cmd) error {
	if len(cmd.Args) > 0 && cmd.Args[0] == trampoline.Arg0 {
		return errors.New("sandbox: WrapCommand: command already wrapped")
	}
	if cmd.Err != nil {
		return fmt.Errorf("sandbox: WrapCommand: %w", cmd.Err)
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Chroot != "" {
		return errors.New("sandbox: WrapCommand: SysProcAttr.Chroot is not supported")
	}
	return workingDir(cmd.Dir)
}

// workingDir checks cmd.Dir before anything runs, so that a directory the
// child half could not enter is reported by its name (as os/exec reports
// "chdir DIR"), not as the failed exec of the child half's own path. The
// error wraps the cause: errors.Is(err, fs.ErrNotExist) for a missing
// directory, syscall.ENOTDIR for one that is not a directory. The child
// half still chdirs (and fails) if the directory goes in between.
func workingDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("sandbox: WrapCommand: working directory %s: %w", dir, pe.Err)
	case err != nil:
		return fmt.Errorf("sandbox: WrapCommand: working directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("sandbox: WrapCommand: working directory %s: %w", dir, syscall.ENOTDIR)
	}
	return nil
}

// spawnTarget is PlanSpawn's Target for cmd.
func spawnTarget(cmd *exec.Cmd, opts wrapOptions) (Target, error) {
	path, resolved, err := wrapTarget(cmd)
	if err != nil {
		return Target{}, err
	}
	env, err := targetEnv(cmd)
	if err != nil {
		return Target{}, err
	}
	cwd := cmd.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	} else if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{cmd.Path}
	}
	return Target{Path: path, Resolved: resolved, Argv: argv, Env: env, Dir: cwd, ExtraFiles: len(cmd.ExtraFiles),
		SpawnOptions: SpawnOptions{
			FailurePipe:         opts.failurePipe != nil,
			DenySetsid:          opts.denySetsid,
			DenyPdeathsigChange: opts.denyPdeathsigChange,
			PIDNamespace:        opts.pidNS != nil,
			Check:               opts.check,
		}}, nil
}

// testHookBeforeRuleIDs, when set (tests), runs in WrapCommand after the
// policy's paths are resolved and before their devices and inodes are
// recorded: the window TestWrapRuleSwappedBeforeRecord swaps a rule path in.
var testHookBeforeRuleIDs func()

// forceGoTrampoline makes WrapCommand use the Go trampoline even where the
// helper works (tests run the WrapCommand tests through both).
var forceGoTrampoline bool

// childHalf returns the helper's sealed memfd, or nil and why the Go
// trampoline is the child half in this process.
func childHalf() (*os.File, string) {
	if forceGoTrampoline {
		return nil, "the Go trampoline is forced (tests)"
	}
	return spawnhelper.Executable()
}

// childHalfLine says, for the plan, which child half WrapCommand and Run use.
func childHalfLine() string {
	if f, why := childHalf(); f == nil {
		return "WrapCommand/Run child half: the Go trampoline (a re-exec of this program), because " + why
	}
	return "WrapCommand/Run child half: the static helper (internal/spawnhelper), from a sealed memfd"
}

// wrapTarget returns the program cmd would execute, as an absolute path
// (relative paths are relative to cmd.Dir, as os/exec has it) and with
// symlinks resolved, after checking that it is an executable regular file.
func wrapTarget(cmd *exec.Cmd) (abs, resolved string, err error) {
	bad := func(err error) (string, string, error) {
		return "", "", fmt.Errorf("sandbox: WrapCommand: target: %w", err)
	}
	path := cmd.Path
	if path == "" {
		return bad(errors.New("no command"))
	}
	if !filepath.IsAbs(path) {
		dir, err := filepath.Abs(cmd.Dir)
		if err != nil {
			return bad(err)
		}
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	resolved, fi, err := execgrant.ResolveFile(path)
	if err != nil {
		return bad(err)
	}
	switch {
	case fi.IsDir():
		return bad(&fs.PathError{Op: "exec", Path: path, Err: syscall.EISDIR})
	case !fi.Mode().IsRegular():
		return bad(&fs.PathError{Op: "exec", Path: path, Err: syscall.EACCES})
	}
	if err := unix.Access(path, unix.X_OK); err != nil {
		return bad(&fs.PathError{Op: "exec", Path: path, Err: err})
	}
	return path, resolved, nil
}

// targetEnv is the environment cmd would give its program, less the child
// half's reserved variables (trampoline.Reserved).
func targetEnv(cmd *exec.Cmd) ([]string, error) {
	// Environ drops entries with a NUL, which Start would refuse.
	for _, kv := range cmd.Env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: WrapCommand: environment entry %q contains NUL", kv)
		}
	}
	return slices.DeleteFunc(cmd.Environ(), trampoline.Reserved), nil
}
