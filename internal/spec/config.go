package spec

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Config is the public sandbox.Config as plain data: the same fields, the
// same meaning (their contracts are documented on sandbox.Config). The
// root package converts one to the other in one place.
type Config struct {
	AllowedReadPaths    []string `json:"allowed_read_paths,omitempty"`
	AllowedWritePaths   []string `json:"allowed_write_paths,omitempty"`
	AllowedTCPConnect   []string `json:"allowed_tcp_connect,omitempty"`
	AllowedTCPBind      []uint16 `json:"allowed_tcp_bind,omitempty"`
	AllowProcessSpawn   bool     `json:"allow_process_spawn,omitempty"`
	AllowedExecPaths    []string `json:"allowed_exec_paths,omitempty"`
	AllowUnixSockets    bool     `json:"allow_unix_sockets,omitempty"`
	AllowUDP            bool     `json:"allow_udp,omitempty"`
	AllowChown          bool     `json:"allow_chown,omitempty"`
	AllowSysVIPC        bool     `json:"allow_sysv_ipc,omitempty"`
	AllowExecWritePaths bool     `json:"allow_exec_write_paths,omitempty"`
	AllowSharedMemory   bool     `json:"allow_shared_memory,omitempty"`
	DenyWritePaths      []string `json:"deny_write_paths"`
	DenyReadPaths       []string `json:"deny_read_paths"`
	Mounts              []Mount  `json:"mounts"`
	PrivateRoot         bool     `json:"private_root,omitempty"`
	NoGitProtection     bool     `json:"no_git_protection,omitempty"`
	AllowCamera         bool     `json:"allow_camera"`
	AllowMicrophone     bool     `json:"allow_microphone"`
	NoTLSTrustService   bool     `json:"no_tls_trust_service,omitempty"`
	Limits              Limits   `json:"limits"`
	Strict              bool     `json:"strict,omitempty"`
	StrictAcceptLoader  bool     `json:"strict_accept_loader,omitempty"`
	// Env, when not nil, is the whole environment of the program
	// WrapCommand or Run starts (sandbox.Config.Env has the contract).
	Env map[string]string `json:"env,omitempty"`

	// RunTemp is the private temporary directory sandbox.Run made for
	// this run (one of AllowedWritePaths, resolved), or "": set by Run
	// only, never from a caller's Config. Run made it empty just before
	// the spawn and removes it, whatever it holds, right after (and a
	// later process's Run sweeps it if this caller is killed first), so
	// git protection does not look for repositories in it: none can be
	// there before the run, and none outlives it (see gitRoots).
	RunTemp string `json:"-"`
}

// Mount shows the host path Path at the path At inside the sandbox,
// read-only unless Write.
type Mount struct {
	Path  string `json:"path"`
	At    string `json:"at"`
	Write bool   `json:"write"`
}

// Limits is sandbox.Limits as plain data (no JSON methods): each field's
// zero value means no limit for that resource.
type Limits struct {
	Processes     int64
	MemoryBytes   int64
	CPUTime       time.Duration
	FileSizeBytes int64
	OpenFiles     int64
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// Validate refuses negative limits.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name  string
		v     int64
		shown string
	}{
		{"limits.processes", l.Processes, ""},
		{"limits.memory_bytes", l.MemoryBytes, ""},
		{"limits.cpu_time", int64(l.CPUTime), l.CPUTime.String()},
		{"limits.file_size_bytes", l.FileSizeBytes, ""},
		{"limits.open_files", l.OpenFiles, ""},
	} {
		if f.v < 0 {
			if f.shown == "" {
				f.shown = strconv.FormatInt(f.v, 10)
			}
			return &ConfigError{Field: f.name, Value: f.shown, Reason: "negative: 0 means no limit"}
		}
	}
	return nil
}

// Path is a path from a Config after validation.
type Path struct {
	Given    string `json:"given"`    // as written in the Config
	Resolved string `json:"resolved"` // absolute, cleaned, symlinks resolved
	IsDir    bool   `json:"is_dir"`
}

// Resolved is a validated Config: every path resolved, every endpoint
// parsed, duplicates removed. Rules are made from it, never from a Config.
type Resolved struct {
	// Config is the Config as given; its options (the Allow* switches,
	// Limits, Strict) are read from here, its paths and endpoints never:
	// those are the fields below.
	Config  Config
	Read    []Path
	Write   []Path
	Exec    []Path
	Connect []Endpoint
	Bind    []uint16
	// DenyWrite and DenyRead are absolute and cleaned, not resolved: they
	// need not exist. Mounts have Path resolved and At cleaned.
	DenyWrite []string
	DenyRead  []string
	Mounts    []Mount
	// Cgroup, when set, is the cgroup WrapCommand found for this spawn;
	// nil: the plan detects it (Linux).
	Cgroup *Cgroup
	// Terminal, on macOS, is the pseudo-terminal Run opened for the
	// program (RunOptions.TTY), which the profile lets it use as one
	// (seatbelt.Policy.Terminal); "" otherwise, and always for WrapCommand.
	Terminal string
	// Env, on macOS under WrapCommand, is the environment the program
	// gets when the command sets one (cmd.Env), read for DEVELOPER_DIR
	// (the xcrun shims' developer directory); nil means the caller's own.
	Env []string
	// Resolver, on Linux under WrapCommand and Run with the egress
	// layer's transparent path, is the generated resolv.conf shown at
	// ResolverAt (/etc/resolv.conf, resolved) by the mount layer.
	Resolver, ResolverAt string
}

// The errors every engine returns, re-exported by the root package under
// the same names (sandbox.ErrUnavailable, …), where their contracts are
// documented.
var (
	ErrUnavailable      = errors.New("sandbox: mechanism not available")
	ErrInvalidConfig    = errors.New("sandbox: invalid config")
	ErrNotEnforced      = errors.New("sandbox: config cannot be fully enforced here")
	ErrPartiallyApplied = errors.New("sandbox: sandbox only partially applied")
)

// ConfigError is the error for a Config value the library refuses. It names
// the field and the value. errors.Is(err, ErrInvalidConfig) is true for it.
type ConfigError struct {
	Field  string // JSON name of the field, e.g. "allowed_read_paths"
	Value  string // the offending value as given
	Reason string
	Err    error // underlying cause, e.g. from os.Stat; may be nil
}

func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("sandbox: invalid config: %s %q: %s", e.Field, e.Value, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ConfigError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidConfig, e.Err}
	}
	return []error{ErrInvalidConfig}
}
