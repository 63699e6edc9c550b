package spec

import (
	"maps"
	"slices"
	"strings"
)

// ValidateEnv checks the names and values of Config.Env: a name is not
// empty and holds no "=" (the environment's separator: "A=B" as a name
// would set A) and no NUL; a value holds no NUL (execve's strings end at
// the first). A nil or empty map is valid. The error is a *ConfigError
// for the field "env" naming the entry.
func ValidateEnv(env map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		switch {
		case k == "":
			return &ConfigError{Field: "env", Value: "=" + v, Reason: "a variable needs a name"}
		case strings.ContainsAny(k, "=\x00"):
			return &ConfigError{Field: "env", Value: k, Reason: `a name cannot hold "=" or NUL`}
		case strings.ContainsRune(v, 0):
			return &ConfigError{Field: "env", Value: k, Reason: "a value cannot hold NUL"}
		}
	}
	return nil
}

// EnvList is env as "NAME=value" entries sorted by name, the form
// exec.Cmd.Env takes; nil for a nil map, and an empty, non-nil slice for
// an empty map (no variable at all, where nil would inherit the caller's).
func EnvList(env map[string]string) []string {
	if env == nil {
		return nil
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
