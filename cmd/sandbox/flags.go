package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openparallax/sandbox"
)

// configFlags are the flags that make a sandbox.Config. --config loads a JSON
// Config first; the other flags add to it.
type configFlags struct {
	file                        string
	ro, rw, exec, connect, bind []string
	denyWrite, denyRead, mounts []string
	noGitProtection             bool
	privateRoot                 bool
	allowSpawn, strict          bool
	strictAcceptLoader          bool
	allowCamera, allowMic       bool
	limits                      sandbox.Limits // set by the --max-* flags; zero fields leave --config's
	allowUDP, allowUnix         bool
	execRW, allowShm            bool
	allowChown, allowSysVIPC    bool
	noTLSTrust                  bool
	given                       map[string]string // absolute path → as typed
}

func multi(fs *flag.FlagSet, dst *[]string, name, help string) {
	fs.Func(name, help, func(s string) error { *dst = append(*dst, s); return nil })
}

func (c *configFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.file, "config", "", "load the Config from `FILE.json` (flags add to it)")
	multi(fs, &c.ro, "ro", "grant reading `PATH` (repeatable)")
	multi(fs, &c.rw, "rw", "grant reading and writing inside `PATH` (repeatable)")
	multi(fs, &c.exec, "exec", "grant executing `PATH` (repeatable)")
	multi(fs, &c.connect, "connect", "grant TCP connect to `HOST:PORT` (repeatable; *:PORT for any host, HOST:* for any port, *:* for any TCP; HOST may be a CIDR range: 10.0.0.0/8:443, [fd00::/8]:443)")
	multi(fs, &c.bind, "bind", "grant TCP bind on `PORT` (repeatable)")
	multi(fs, &c.denyWrite, "deny-write", "keep `PATH` read-only even inside a --rw path (repeatable; Linux: WrapCommand/Run's mount layer)")
	multi(fs, &c.denyRead, "deny-read", "hide `PATH` even inside a granted path (repeatable; Linux: WrapCommand/Run's mount layer)")
	multi(fs, &c.mounts, "mount", "show the host path HOST at AT inside the sandbox, read-only, or read-write with :rw (`HOST:AT[:rw]`, repeatable; Linux: WrapCommand/Run's mount layer)")
	fs.BoolVar(&c.noGitProtection, "no-git-protection", false, "do not keep the hooks and config of git repositories in the --rw paths read-only (no_git_protection)")
	fs.BoolVar(&c.privateRoot, "private-root", false, "give the program a root of its own: only the system paths, the grants and the mounts are there (private_root; Linux, refused elsewhere)")
	fs.BoolVar(&c.allowSpawn, "allow-spawn", false, "let the program create processes")
	fs.BoolVar(&c.allowCamera, "allow-camera", false, "let the program use the camera (macOS device-camera; not enforceable elsewhere)")
	fs.BoolVar(&c.allowMic, "allow-microphone", false, "let the program use the microphone (macOS device-microphone; not enforceable elsewhere)")
	fs.BoolVar(&c.allowUDP, "allow-udp", false, "let the program use UDP to any host and port (allow_udp)")
	fs.BoolVar(&c.allowUnix, "allow-unix", false, "let the program create unix sockets (allow_unix_sockets)")
	fs.BoolVar(&c.execRW, "allow-exec-rw", false, "let the program run what it builds: the --rw paths become executable (allow_exec_write_paths)")
	fs.BoolVar(&c.allowShm, "allow-shm", false, "grant /dev/shm for POSIX shared memory and semaphores, e.g. Python multiprocessing; shared with the host (allow_shared_memory)")
	fs.BoolVar(&c.allowChown, "allow-chown", false, "let the program change file owners (to your own user and groups only: it keeps no capability) and extended attributes by path, e.g. tar or cp -a restoring owners (allow_chown)")
	fs.BoolVar(&c.allowSysVIPC, "allow-sysv-ipc", false, "let the program use System V shared memory, message queues and semaphores, e.g. PostgreSQL; a private IPC namespace under run (allow_sysv_ipc)")
	fs.BoolVar(&c.noTLSTrust, "no-tls-trust-service", false, "macOS: leave the system's certificate trust service out of the profile (no_tls_trust_service)")
	fs.BoolVar(&c.strict, "strict", false, "refuse to run if any part of the Config cannot be enforced here")
	fs.BoolVar(&c.strictAcceptLoader, "strict-accept-loader", false, "--strict, accepting only the dynamic loader of a granted dynamically linked program (exec_loader), which no flag can close; every other part not enforced is still refused (strict_accept_loader)")
	fs.Func("max-procs", "limit the tasks (processes and threads) to `N`", intFlag(&c.limits.Processes))
	fs.Func("max-memory", "limit memory to `SIZE` (bytes, or with a K, M or G suffix: 1024-based)", sizeFlag(&c.limits.MemoryBytes))
	fs.Func("max-cpu", "limit CPU time to `DURATION` (e.g. 30s, 5m)", durationFlag(&c.limits.CPUTime, true))
	fs.Func("max-file-size", "limit the size of a file a process writes to `SIZE`", sizeFlag(&c.limits.FileSizeBytes))
	fs.Func("max-open-files", "limit the descriptors of a process to `N`", intFlag(&c.limits.OpenFiles))
}

// durationFlag reads a Go duration (5s, 2m, 1h30m); positive refuses 0.
// A bare number is refused, with the format in the error.
func durationFlag(dst *time.Duration, positive bool) func(string) error {
	return func(s string) error {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return fmt.Errorf("%q is not a duration; write 5s, 2m or 1h30m", s)
		case d < 0 || positive && d == 0:
			return fmt.Errorf("%q is not a positive duration; write e.g. 30s, 5m", s)
		}
		*dst = d
		return nil
	}
}

// progFlags are the program's flags beside the Config: its environment
// and working directory. run uses them; plan and verify check them, so
// that a run's command line can be checked as it is.
type progFlags struct {
	env     []string
	keepEnv bool
	cwd     string
	goCache string
}

func (p *progFlags) register(fs *flag.FlagSet) {
	multi(fs, &p.env, "env", "set `K=V` in the program's environment (repeatable); its PATH finds CMD, as env(1) does")
	fs.BoolVar(&p.keepEnv, "keep-env", false, "pass this environment to the program (default: PATH only)")
	fs.StringVar(&p.cwd, "cwd", "", "run the program in `DIR` (default: this working directory; relative paths of other flags stay relative to this one)")
	fs.StringVar(&p.goCache, "go-cache", "", "keep Go's build cache in `DIR` between runs: created if absent, granted read-write, GOCACHE=DIR (the program writes it: never your own cache, which go outside the sandbox trusts; e.g. ~/.cache/sandbox-go-build)")
}

// check refuses a malformed --env and a --cwd that is not a directory,
// and makes cwd absolute.
func (p *progFlags) check() error {
	for _, kv := range p.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("--env %q: want K=V", kv)
		}
	}
	if p.cwd == "" {
		return nil
	}
	abs, err := expandPath(p.cwd)
	if err != nil {
		return fmt.Errorf("--cwd %q: %v", p.cwd, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return fmt.Errorf("--cwd %q: %v", p.cwd, err)
	case !fi.IsDir():
		return fmt.Errorf("--cwd %q: not a directory", p.cwd)
	}
	p.cwd = abs
	return nil
}

// configEnv sets cfg.Env, the program's whole environment (the Config's
// one owner of it): the env of --config when it has one, else PATH alone
// (this process's), or this process's whole environment with --keep-env;
// then each --env entry, replacing the variable of its name. --keep-env
// and an env in --config exclude each other (which would win is a guess).
func (p *progFlags) configEnv(cfg *sandbox.Config) error {
	env := map[string]string{}
	switch {
	case cfg.Env != nil && p.keepEnv:
		return errors.New("--keep-env: the --config file sets env, the program's whole environment; use one of them")
	case cfg.Env != nil:
		maps.Copy(env, cfg.Env)
	case p.keepEnv:
		for _, kv := range os.Environ() {
			// Windows' per-drive directories ("=C:=C:\\x") have no name.
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				setEnv(env, k, v)
			}
		}
	default:
		env["PATH"] = os.Getenv("PATH")
	}
	for _, kv := range p.env {
		k, v, _ := strings.Cut(kv, "=")
		setEnv(env, k, v)
	}
	cfg.Env = env
	return nil
}

// setEnv sets env[k] = v, first removing a variable of the same name in
// another case on Windows, where names are case-insensitive (Path is
// PATH), so that the program sees one of them.
func setEnv(env map[string]string, k, v string) {
	if runtime.GOOS == "windows" {
		for old := range env {
			if strings.EqualFold(old, k) {
				delete(env, old)
			}
		}
	}
	env[k] = v
}

func intFlag(dst *int64) func(string) error {
	return func(s string) error {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive whole number")
		}
		*dst = n
		return nil
	}
}

// sizeFlag reads a byte count with an optional K, M or G suffix (powers of
// 1024).
func sizeFlag(dst *int64) func(string) error {
	return func(s string) error {
		mult := int64(1)
		switch strings.ToUpper(s[len(s)-min(len(s), 1):]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > (1<<62)/mult {
			return fmt.Errorf("want a positive size in bytes, or with a K, M or G suffix")
		}
		*dst = n * mult
		return nil
	}
}

// config builds the Config, or a one-line usage error naming the flag.
func (c *configFlags) config() (sandbox.Config, error) {
	var cfg sandbox.Config
	if c.file != "" {
		data, err := os.ReadFile(c.file)
		if err != nil {
			return cfg, fmt.Errorf("--config: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return cfg, fmt.Errorf("--config %s: %v", c.file, err)
		}
		if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
			return cfg, fmt.Errorf("--config %s: trailing data after the Config", c.file)
		}
	}
	for _, l := range []struct {
		flag string
		from []string
		to   *[]string
	}{{"--ro", c.ro, &cfg.AllowedReadPaths}, {"--rw", c.rw, &cfg.AllowedWritePaths}, {"--exec", c.exec, &cfg.AllowedExecPaths},
		{"--deny-write", c.denyWrite, &cfg.DenyWritePaths}, {"--deny-read", c.denyRead, &cfg.DenyReadPaths}} {
		for _, p := range l.from {
			abs, err := expandPath(p)
			if err != nil {
				return cfg, fmt.Errorf("%s %q: %v", l.flag, p, err)
			}
			*l.to = append(*l.to, abs)
			if abs != p {
				if c.given == nil {
					c.given = map[string]string{}
				}
				c.given[abs] = p
			}
		}
	}
	for _, m := range c.mounts {
		parts := strings.Split(m, ":")
		write := false
		if len(parts) == 3 && parts[2] == "rw" {
			parts, write = parts[:2], true
		}
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return cfg, fmt.Errorf("--mount %q: want HOST:AT or HOST:AT:rw", m)
		}
		host, err := expandPath(parts[0])
		if err != nil {
			return cfg, fmt.Errorf("--mount %q: %v", m, err)
		}
		at, err := expandPath(parts[1])
		if err != nil {
			return cfg, fmt.Errorf("--mount %q: %v", m, err)
		}
		cfg.Mounts = append(cfg.Mounts, sandbox.Mount{Path: host, At: at, Write: write})
	}
	cfg.NoGitProtection = cfg.NoGitProtection || c.noGitProtection
	cfg.PrivateRoot = cfg.PrivateRoot || c.privateRoot
	for _, ep := range c.connect {
		if strings.Contains(ep, "://") {
			return cfg, fmt.Errorf("--connect %q: a URL; write HOST:PORT (e.g. example.com:443)", ep)
		}
	}
	cfg.AllowedTCPConnect = append(cfg.AllowedTCPConnect, c.connect...)
	cfg.AllowUDP = cfg.AllowUDP || c.allowUDP
	cfg.AllowUnixSockets = cfg.AllowUnixSockets || c.allowUnix
	cfg.AllowExecWritePaths = cfg.AllowExecWritePaths || c.execRW
	cfg.AllowSharedMemory = cfg.AllowSharedMemory || c.allowShm
	cfg.AllowChown = cfg.AllowChown || c.allowChown
	cfg.AllowSysVIPC = cfg.AllowSysVIPC || c.allowSysVIPC
	cfg.NoTLSTrustService = cfg.NoTLSTrustService || c.noTLSTrust
	for _, b := range c.bind {
		p, err := strconv.ParseUint(b, 10, 16)
		if err != nil || strings.TrimLeft(b, "0123456789") != "" {
			return cfg, fmt.Errorf("--bind %q: want a port number 0-65535", b)
		}
		cfg.AllowedTCPBind = append(cfg.AllowedTCPBind, uint16(p))
	}
	l := &cfg.Limits
	for _, f := range []struct{ flag, cfg *int64 }{
		{&c.limits.Processes, &l.Processes}, {&c.limits.MemoryBytes, &l.MemoryBytes},
		{&c.limits.FileSizeBytes, &l.FileSizeBytes}, {&c.limits.OpenFiles, &l.OpenFiles},
	} {
		if *f.flag != 0 {
			*f.cfg = *f.flag
		}
	}
	if c.limits.CPUTime != 0 {
		l.CPUTime = c.limits.CPUTime
	}
	cfg.AllowProcessSpawn = cfg.AllowProcessSpawn || c.allowSpawn
	cfg.AllowCamera = cfg.AllowCamera || c.allowCamera
	cfg.AllowMicrophone = cfg.AllowMicrophone || c.allowMic
	cfg.Strict = cfg.Strict || c.strict || c.strictAcceptLoader
	cfg.StrictAcceptLoader = cfg.StrictAcceptLoader || c.strictAcceptLoader
	if err := cfg.Validate(); err != nil {
		return cfg, configFlagError(err, c.given)
	}
	return cfg, nil
}

// expandPath makes a path given on the command line absolute, as a shell
// user means it: "~" and "~/x" relative to $HOME, anything else relative
// to the working directory. (Paths in --config stay as the library takes
// them: absolute.)
func expandPath(p string) (string, error) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, p[1:]), nil
	case strings.HasPrefix(p, "~"):
		return "", errors.New("~user is not supported: write the path")
	case p == "":
		return "", errors.New("empty path")
	}
	return filepath.Abs(p)
}

// configFlagError names the flag behind a refused Config field.
// given maps the absolute form of a path typed on the command line back to
// what was typed.
func configFlagError(err error, given map[string]string) error {
	ce, ok := err.(*sandbox.ConfigError)
	if !ok {
		return err
	}
	flagFor := map[string]string{
		"allowed_read_paths": "--ro", "allowed_write_paths": "--rw", "allowed_exec_paths": "--exec",
		"allowed_tcp_connect": "--connect", "deny_write_paths": "--deny-write", "deny_read_paths": "--deny-read",
		"mounts": "--mount",
	}
	name := flagFor[ce.Field]
	if name == "" {
		name = ce.Field
	}
	msg := fmt.Sprintf("%s %q: %s", name, ce.Value, ce.Reason)
	if typed := given[ce.Value]; typed != "" {
		msg = fmt.Sprintf("%s %q (%s): %s", name, typed, ce.Value, ce.Reason)
	}
	if ce.Err != nil {
		msg += ": " + ce.Err.Error()
	}
	return fmt.Errorf("%s (or %s in --config)", msg, ce.Field)
}

// newFlagSet makes a FlagSet whose errors are one line on stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args; on error it prints one line naming the flag and
// returns exitUsage. -h and --help print the command's usage and flags on
// stdout and return exitOK. ok is true when the command should go on.
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			// This command's lines of usage: its own and the ones
			// continuing it.
			fmt.Fprintln(stdout, "usage:")
			in := false
			for l := range strings.SplitSeq(usage, "\n") {
				if t := strings.TrimSpace(l); strings.HasPrefix(t, "sandbox ") {
					in = t == "sandbox "+fs.Name() || strings.HasPrefix(t, "sandbox "+fs.Name()+" ")
				}
				if in {
					fmt.Fprintln(stdout, l)
				}
			}
			printGroups(stdout, fs, fs.Lookup("ro") != nil)
			return exitOK, false
		}
		fmt.Fprintf(stderr, "sandbox %s: %v\n", fs.Name(), flagError(err))
		return exitUsage, false
	}
	return 0, true
}

// flagValueRE matches the flag package's error for a value a flag refused;
// compiled on a flag error only, not at every start (90 allocations).
var flagValueRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value (".*") for flag -([A-Za-z0-9-]+): (.*)$`)
})

// flagError names the flag as it is written (--name), with the value
// unless the reason already quotes it: `--timeout: "5" is not a duration;
// write 5s, 2m or 1h30m`.
func flagError(err error) string {
	m := flagValueRE().FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	if strings.HasPrefix(m[3], m[1]) {
		return "--" + m[2] + ": " + m[3]
	}
	return "--" + m[2] + " " + m[1] + ": " + m[3]
}

func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "sandbox %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return exitUsage
}
