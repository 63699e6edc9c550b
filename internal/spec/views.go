package spec

import (
	"fmt"
	"strings"
)

// Grants that change what the program sees (Config.Mounts, a Mount's
// target shown where the host has nothing, Config.PrivateRoot) can only
// be made by a mount namespace of the program's own. Where one cannot be
// made (ApplySelf, macOS, Windows, a Linux host without user namespaces)
// such a Config is refused, with the reason, rather than run with the
// program seeing the host's tree instead: it would look for its files at
// paths that are not there, or see what the Config meant to keep out of
// its view.

// ViewChanges lists the fields of cfg that change what the program sees
// ("mounts", "private_root"), nil when there are none.
func ViewChanges(cfg Config) []string {
	var out []string
	if len(cfg.Mounts) > 0 {
		out = append(out, "mounts")
	}
	if cfg.PrivateRoot {
		out = append(out, "private_root")
	}
	return out
}

// RefuseViews returns the error an entry point where the program's view
// cannot be changed fails with for cfg (nil when cfg asks for no such
// change): where names the entry point and platform ("ApplySelf",
// "WrapCommand on darwin"), reason why it cannot be made there. It wraps
// ErrUnavailable.
func RefuseViews(cfg Config, where, reason string) error {
	v := ViewChanges(cfg)
	if len(v) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: refused: %s change what the program sees, which needs a mount namespace of its own: %s",
		ErrUnavailable, where, strings.Join(v, " and "), reason)
}
