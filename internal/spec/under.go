package spec

import "strings"

// Under reports whether the path p is root or lies inside it, byte-wise:
// both are taken as cleaned absolute paths, and a trailing "/" on root is
// ignored, so every absolute path is under "/", and "/a/bc" is not under
// "/a/b". It allocates nothing: WrapCommand asks it some twenty times
// per spawn.
func Under(p, root string) bool {
	if p == root {
		return true
	}
	root = strings.TrimSuffix(root, "/")
	return len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root
}
