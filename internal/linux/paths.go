package linux

import (
	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spec"
)

// execGrants is the exec allowlist as execgrant.Extras takes it: each
// path resolved, and whether it is a directory.
func execGrants(exec []spec.Path) []execgrant.Grant {
	out := make([]execgrant.Grant, len(exec))
	for i, rp := range exec {
		out[i] = execgrant.Grant{Path: rp.Resolved, IsDir: rp.IsDir}
	}
	return out
}
