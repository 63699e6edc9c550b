package sandbox

import "strings"

// isUnder reports whether p is root or inside it (byte-wise).
func isUnder(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}
