package runtemp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// tempEnvVars point programs at the private temporary directory: TMPDIR
// (POSIX, glibc, Python, bash, gcc, sort, mktemp), TMP and TEMP (Windows
// conventions many tools also read), GOTMPDIR (the go command's work
// directories).
var tempEnvVars = []string{"TMPDIR", "TMP", "TEMP", "GOTMPDIR"}

// Dir is a Run's private temporary directory. Its zero value is not
// usable: make one with New.
type Dir struct {
	dir  string // granted read-write for the run
	home string // HOME inside dir, when the caller set none; else ""
}

// New creates a fresh directory (mode 0700) in the caller's temporary
// directory (named by Pattern), with a tmp directory inside it and a home
// beside that when env sets no HOME (with Go's telemetry mode off in it:
// writeGoTelemetryOff). First, at this process's first New in that
// temporary directory and then at most once per sweepEvery, it removes
// those a killed caller left there (sweepLazily: Linux). The path is
// resolved (macOS: /private/var/folders), since rules are made on
// resolved paths. On error nothing is left behind.
func New(env []string) (*Dir, error) {
	// Rules are made on resolved paths (macOS: /private/var/folders).
	// The temporary directory is resolved before the directory is made
	// in it: what is made there is a directory, not a link, so the whole
	// path is then resolved.
	parent := os.TempDir()
	if r, err := filepath.EvalSymlinks(parent); err == nil {
		parent = r
	}
	sweepLazily(parent)
	dir, err := os.MkdirTemp(parent, Pattern())
	if err != nil {
		return nil, err
	}
	t := &Dir{dir: dir}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		t.home = filepath.Join(dir, "home")
		if err := os.Mkdir(t.home, 0o700); err != nil {
			t.Remove()
			return nil, err
		}
		if err := writeGoTelemetryOff(t.home); err != nil {
			t.Remove()
			return nil, err
		}
	}
	if err := os.Mkdir(t.tmp(), 0o700); err != nil {
		t.Remove()
		return nil, err
	}
	return t, nil
}

// Path is the directory to grant read-write for the run: it holds the
// temporary directory and the home (if any), and nothing else of the
// caller's.
func (t *Dir) Path() string { return t.dir }

// tmp is what the temporary-directory variables name: a directory beside
// the home, so that a program cleaning its temporary files leaves the home
// alone.
func (t *Dir) tmp() string { return filepath.Join(t.dir, "tmp") }

// Environ returns env with the temporary-directory variables set to the
// private directory (replacing any the caller set: those name directories
// the sandbox does not grant) and HOME added when env has none. The result
// is a new slice, never nil (a nil exec.Cmd.Env would inherit the
// caller's); env is not modified.
func (t *Dir) Environ(env []string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(tempEnvVars, k)
	})
	for _, k := range tempEnvVars {
		out = append(out, k+"="+t.tmp())
	}
	if t.home != "" {
		out = append(out, "HOME="+t.home)
	}
	return out
}

// Remove deletes the directory and everything in it. Run calls it once
// the program has exited and its tree is ended; what is left inside is
// the program's, and is removed without following any link it holds
// (removeTempTree: beneath a descriptor of the caller's temporary
// directory, which the program could not write, on Linux and macOS;
// os.RemoveAll, which follows no link or junction, on Windows).
func (t *Dir) Remove() error {
	// Most runs leave the directory as it was made: three rmdirs, where
	// a full removal opens and lists every directory first (a fifth of a
	// short Run's own time, profiled). rmdir removes only what is empty,
	// so anything the program left falls through to the full removal.
	return removeTempTree(t.dir, t.quickRemoval())
}
