package main

// The hint for pip's "externally-managed-environment": the pip that ran
// was the system's, refusing to install into /usr. Under run that is what
// a venv's pip turns into when it cannot run: its bin/pip is a script in
// a write path, which is mounted noexec, so a shell's PATH search passes
// over it to the system's pip. A venv works when --exec covers the
// interpreter its bin/python link resolves to; no grant is ever derived
// from a link inside a write path, so the hint names that interpreter and
// leaves the grant to the user.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// pipHint names what the venv in use lacks (see above).
func pipHint(_ []string, hc hintContext) string {
	venv := findVenv(hc)
	if venv == "" {
		return "pip refused to install into the system's Python: make a venv in a --rw path (python3 -m venv DIR) and run DIR/bin/python -m pip (--exec must cover the interpreter DIR/bin/python links to)"
	}
	py := filepath.Join(venv, "bin", "python3")
	if _, err := os.Lstat(py); err != nil {
		py = filepath.Join(venv, "bin", "python")
	}
	target, err := filepath.EvalSymlinks(py)
	if err != nil {
		return fmt.Sprintf("the pip that ran is the system's, not the venv %s's: its %s resolves to nothing here (%v)", venv, py, err)
	}
	if h := pathHint(target, "exec", hc); h != "" {
		return fmt.Sprintf("the pip that ran is the system's, not the venv %s's: %s links to %s, which --exec does not cover (no grant is derived from a link in a write path): %s", venv, py, target, h)
	}
	if !hc.cfg.AllowExecWritePaths {
		return fmt.Sprintf("the pip that ran is the system's, not the venv %s's: %s/bin/pip is a script in a write path, which is mounted noexec, so the PATH search passed over it; run %s -m pip (it links to %s, which --exec covers), or give --allow-exec-rw", venv, venv, py, target)
	}
	return fmt.Sprintf("the pip that ran is the system's, not the venv %s's: put %s/bin first in the program's PATH (--env PATH=%s/bin:...), or run %s -m pip", venv, venv, venv, py)
}

// findVenv returns the venv the program meant: $VIRTUAL_ENV in its
// environment, else the first directory holding pyvenv.cfg at the top of
// a write path or one level below; "" when there is none.
func findVenv(hc hintContext) string {
	if v, ok := lookupEnv(hc.env, "VIRTUAL_ENV"); ok && isVenv(v) {
		return v
	}
	for _, w := range hc.cfg.AllowedWritePaths {
		if isVenv(w) {
			return w
		}
		ents, _ := os.ReadDir(w)
		for _, e := range ents {
			if d := filepath.Join(w, e.Name()); e.IsDir() && !strings.HasPrefix(e.Name(), ".git") && isVenv(d) {
				return d
			}
		}
	}
	return ""
}

func isVenv(d string) bool {
	fi, err := os.Stat(filepath.Join(d, "pyvenv.cfg"))
	return err == nil && fi.Mode().IsRegular()
}

// lookupEnv finds key in env ("K=V" entries; the last one wins, as in
// exec.Cmd).
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// envEntries is a Config's Env as "K=V" entries, sorted by name.
func envEntries(env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
