package sandbox

import (
	"errors"
	"maps"
	"os/exec"
	"slices"
	"sync/atomic"

	"github.com/openparallax/sandbox/internal/spec"
)

// New returns the sandbox for this platform.
//
// Its ApplySelf remembers the Config it applied (also when it returns
// ErrPartiallyApplied), so that [VerifyCanary] in the same process verifies
// against that Config. The value still implements [PostStarter] where the
// platform's does (Windows).
func New() Sandbox {
	s := newPlatform()
	if ps, ok := s.(PostStarter); ok {
		return rememberingPostStarter{remembering{s}, ps}
	}
	return remembering{s}
}

// remembering records the Config of each ApplySelf that left the process
// restricted.
type remembering struct{ Sandbox }

type rememberingPostStarter struct {
	remembering
	PostStarter
}

// appliedConfig is the Config of the last ApplySelf in this process that
// restricted it, or nil.
var appliedConfig atomic.Pointer[Config]

func (r remembering) ApplySelf(cfg Config) error {
	if cfg.Env != nil {
		return &ConfigError{Field: "env", Reason: "ApplySelf cannot replace the environment of the process that calls it: Env is for a program WrapCommand or Run starts"}
	}
	err := r.Sandbox.ApplySelf(cfg)
	if err == nil || errors.Is(err, ErrPartiallyApplied) {
		c := cfg.clone()
		appliedConfig.Store(&c)
	}
	return err
}

// WrapCommand makes Config.Env the command's environment (see
// Config.Env), then wraps it; on an error cmd.Env is as it was.
func (r remembering) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	if cfg.Env == nil || cmd == nil {
		return r.Sandbox.WrapCommand(cmd, cfg)
	}
	if cmd.Env != nil {
		return &ConfigError{Field: "env", Reason: "set together with cmd.Env: the environment has one owner, set one of them"}
	}
	if err := spec.ValidateEnv(cfg.Env); err != nil {
		return err
	}
	cmd.Env = spec.EnvList(cfg.Env)
	if err := r.Sandbox.WrapCommand(cmd, cfg); err != nil {
		cmd.Env = nil
		return err
	}
	return nil
}

// clone is a deep copy of cfg: nothing the caller changes later reaches it.
func (cfg Config) clone() Config {
	c := cfg
	c.AllowedReadPaths = slices.Clone(cfg.AllowedReadPaths)
	c.AllowedWritePaths = slices.Clone(cfg.AllowedWritePaths)
	c.AllowedTCPConnect = slices.Clone(cfg.AllowedTCPConnect)
	c.AllowedTCPBind = slices.Clone(cfg.AllowedTCPBind)
	c.AllowedExecPaths = slices.Clone(cfg.AllowedExecPaths)
	c.DenyWritePaths = slices.Clone(cfg.DenyWritePaths)
	c.DenyReadPaths = slices.Clone(cfg.DenyReadPaths)
	c.Mounts = slices.Clone(cfg.Mounts)
	c.Env = maps.Clone(cfg.Env)
	return c
}
