package linux

import (
	"strings"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spec"
)

// isUnder reports whether p is root or inside it (byte-wise).
func isUnder(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// execGrants is the exec allowlist as execgrant.Extras takes it: each
// path resolved, and whether it is a directory.
func execGrants(exec []spec.Path) []execgrant.Grant {
	out := make([]execgrant.Grant, len(exec))
	for i, rp := range exec {
		out[i] = execgrant.Grant{Path: rp.Resolved, IsDir: rp.IsDir}
	}
	return out
}
