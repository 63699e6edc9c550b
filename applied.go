package sandbox

import (
	"errors"
	"slices"
	"sync/atomic"
)

// What ApplySelf remembers: the Config that left this process restricted,
// which VerifyCanary then verifies against.

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
	err := r.Sandbox.ApplySelf(cfg)
	if err == nil || errors.Is(err, ErrPartiallyApplied) {
		c := cfg.clone()
		appliedConfig.Store(&c)
	}
	return err
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
	return c
}
