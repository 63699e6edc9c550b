package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/linux"
)

// Every Run gets a private temporary directory. Without one, a program
// finds /tmp denied but believes it writable (Landlock does not mediate
// access(2), so bash and gcc do not fall back): bash's here-documents
// over a pipe's size turned into empty input, sort failed inside pipelines
// that exited 0, gcc aborted, and Python left tmpXXXX directories in the
// workspace. Granting /tmp instead would hand the program every other
// user's and process's temporary files.

// tempEnvVars point programs at the private temporary directory: TMPDIR
// (POSIX, glibc, Python, bash, gcc, sort, mktemp), TMP and TEMP (Windows
// conventions many tools also read), GOTMPDIR (the go command's work
// directories).
var tempEnvVars = []string{"TMPDIR", "TMP", "TEMP", "GOTMPDIR"}

// runTempDir is a Run's private temporary directory.
type runTempDir struct {
	dir  string // granted read-write for the run
	home string // HOME inside dir, when the caller set none; else ""
}

// newRunTempDir creates a fresh directory (mode 0700) in the caller's
// temporary directory, and a home inside it when env sets no HOME. First
// it removes those a killed caller left there (sweepRunTemps: Linux).
func newRunTempDir(env []string) (*runTempDir, error) {
	linux.SweepRunTemps()
	dir, err := os.MkdirTemp("", linux.RunTempPattern())
	if err != nil {
		return nil, err
	}
	// Rules are made on resolved paths (macOS: /private/var/folders).
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	t := &runTempDir{dir: dir}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		t.home = filepath.Join(dir, "home")
		if err := os.Mkdir(t.home, 0o700); err != nil {
			t.remove()
			return nil, err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		t.remove()
		return nil, err
	}
	return t, nil
}

// tmp is what the temporary-directory variables name: a directory beside
// the home, so that a program cleaning its temporary files leaves the home
// alone.
func (t *runTempDir) tmp() string { return filepath.Join(t.dir, "tmp") }

// environ returns env with the temporary-directory variables set to the
// private directory (replacing any the caller set: those name directories
// the sandbox does not grant) and HOME added when env has none.
func (t *runTempDir) environ(env []string) []string {
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

// remove deletes the directory and everything in it. Run calls it once
// the program has exited and its tree is ended; what is left inside is
// the program's, and is removed without following any link it holds
// (removeTempTree: beneath a descriptor of the caller's temporary
// directory, on Linux and macOS).
func (t *runTempDir) remove() error {
	// Most runs leave the directory as it was made: three rmdirs, where
	// a full removal opens and lists every directory first (a fifth of a
	// short Run's own time, profiled). rmdir removes only what is empty,
	// so anything the program left falls through to the full removal.
	quick := []string{"tmp"}
	if t.home != "" {
		quick = []string{"home", "tmp"}
	}
	return removeTempTree(t.dir, quick)
}
