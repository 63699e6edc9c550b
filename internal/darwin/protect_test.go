package darwin

// Issue 33 on every OS: git protection, file-map-executable, a WrapCommand
// target in a write path, the user-lookup channel, Python's semaphores, the
// xcrun shims' developer directory and Run's controlling terminal, as the
// profile, the Plan and the command line show them. Enforcement is for a
// Mac: sandbox_darwin_issue33_test.go in the root package.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// lastForm is the last top-level form of an SBPL text that starts with
// "(" at the beginning of a line.
func lastForm(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "(") {
			return lines[i]
		}
	}
	return ""
}

func TestDarwinGitProtection(t *testing.T) {
	rc := testRC(t)
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	checkSBPL(t, prof.Text)
	last := lastForm(prof.Text)
	if !strings.HasPrefix(last, "(deny file-write* (regex ") {
		t.Errorf("the git deny is not the last form (the last matching rule wins): %s", last)
	}
	if strings.Index(prof.Text, `(allow file-read* file-write* (subpath (param "W0")))`) > strings.Index(prof.Text, "(deny file-write*") {
		t.Error("the write allow comes after the git deny, and would win")
	}
	plan := Plan(rc, true)
	g := features(plan, spec.FeatureGitProtect)
	if len(g) != 1 || !g[0].Enforced || !strings.Contains(g[0].Detail, "/Users/dev/ws") || !strings.Contains(g[0].Detail, "not available") {
		t.Errorf("git_protection: %+v, want one enforced entry naming the write path and the after-run report as not available", g)
	}
	if c := features(plan, spec.FeatureGitCommonDir); len(c) != 1 || !c[0].Enforced {
		t.Errorf("git_commondir: %+v, want enforced (the same deny)", c)
	}

	rc.Config.NoGitProtection = true
	prof, err = profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(prof.Text, "(deny file-write*") {
		t.Error("no_git_protection: the profile still denies git writes")
	}
	plan = Plan(rc, true)
	if len(features(plan, spec.FeatureGitProtect))+len(features(plan, spec.FeatureGitCommonDir)) != 0 {
		t.Error("no_git_protection: the plan still reports git protection")
	}
	if len(features(Plan(&spec.Resolved{}, true), spec.FeatureGitProtect)) != 0 {
		t.Error("no write path: git protection reported")
	}
}

func TestDarwinMapExecutable(t *testing.T) {
	rc := testRC(t)
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prof.Text, "\n(deny file-map-executable process-info* iokit-get-properties nvram*)\n") {
		t.Error("file-map-executable is not denied after (deny default)")
	}
	for _, line := range strings.Split(prof.Text, "\n") {
		if strings.Contains(line, "file-map-executable") && (strings.Contains(line, `"R0"`) || strings.Contains(line, `"W0"`)) {
			t.Errorf("a read or write path is mappable as code: %s", line)
		}
	}
	exec := features(Plan(rc, true), spec.FeatureExec)
	if len(exec) != 1 || !strings.Contains(exec[0].Detail, "file-map-executable") || !strings.Contains(exec[0].Detail, "a read path is never code") {
		t.Errorf("exec: %+v, want the map-executable rule stated", exec)
	}
}

func TestDarwinToolchainSwitches(t *testing.T) {
	rc := testRC(t)
	rc.Config.AllowExecWritePaths, rc.Config.AllowSharedMemory = true, true
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{
		`(allow process-exec* file-map-executable (subpath (param "W0")))`,
		`(allow ipc-posix-sem (ipc-posix-name-prefix "/mp-") (ipc-posix-name-prefix "mp-"))`,
	} {
		if !strings.Contains(prof.Text, rule) {
			t.Errorf("profile lacks %s", rule)
		}
	}
	plan := Plan(rc, true)
	if e := features(plan, spec.FeatureExecWrites); len(e) != 1 || !e[0].Enforced {
		t.Errorf("exec_write_paths: %+v, want granted (enforced)", e)
	}
	if s := features(plan, spec.FeatureSharedMem); len(s) != 1 || s[0].Enforced || !strings.Contains(s[0].Detail, "/mp-") || !strings.Contains(s[0].Detail, "not private") {
		t.Errorf("shared_memory: %+v, want one entry, not enforced (the host's semaphores), naming /mp-", s)
	}
	for _, f := range plan.Features {
		if strings.Contains(f.Detail, "not implemented on darwin") {
			t.Errorf("%s: %s", f.Feature, f.Detail)
		}
	}
}

func TestDarwinUserLookupChannel(t *testing.T) {
	plan := Plan(&spec.Resolved{}, true)
	u := features(plan, spec.FeatureUserLookup)
	if len(u) != 1 || !strings.HasPrefix(u[0].Detail, "channel: com.apple.system.opendirectoryd.libinfo") {
		t.Errorf("user_lookup_service: %+v, want one channel entry", u)
	}
	if err := plan.StrictError(spec.ScopeCommand); err != nil {
		t.Errorf("Strict refuses the plainest Config on macOS: %v", err)
	}
}

func TestDarwinWritableTarget(t *testing.T) {
	dir := safeDir(t)
	tool, _ := testTool(t, dir)
	ws := filepath.Dir(tool)
	for _, tc := range []struct {
		name string
		cfg  spec.Config
		ok   bool
	}{
		{"in a write path", spec.Config{AllowedWritePaths: []string{ws}}, false},
		{"write path above it", spec.Config{AllowedWritePaths: []string{dir}}, false},
		{"allow_exec_write_paths", spec.Config{AllowedWritePaths: []string{ws}, AllowExecWritePaths: true}, true},
		{"an exec path covers it", spec.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{ws}}, true},
		{"outside the write paths", spec.Config{AllowedReadPaths: []string{ws}}, true},
	} {
		cmd := exec.Command(tool)
		err := wrapCommand(cmd, tc.cfg, nil)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok && (!errors.Is(err, spec.ErrInvalidConfig) || cmd.Path != tool || !strings.Contains(err.Error(), "allow_exec_write_paths")) {
			t.Errorf("%s: err %v, Path %q: want ErrInvalidConfig naming the remedy, cmd untouched", tc.name, err, cmd.Path)
		}
	}
}

// fakeHost replaces the host facts for one test: env for DEVELOPER_DIR,
// link for the xcode-select link ("" for none), dirs the directories.
func fakeHost(t *testing.T, env map[string]string, link string, dirs ...string) {
	t.Helper()
	saved := host
	t.Cleanup(func() { host = saved })
	host.lookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	host.readlink = func(p string) (string, error) {
		if p != xcodeSelectLink || link == "" {
			return "", &fs.PathError{Op: "readlink", Path: p, Err: fs.ErrNotExist}
		}
		return link, nil
	}
	host.evalSymlinks = func(p string) (string, error) { return p, nil }
	host.isDir = func(p string) bool { return slices.Contains(dirs, p) }
}

func TestDarwinDeveloperDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Seatbelt profile takes POSIX paths; Windows paths cannot appear in one")
	}
	const xcode = "/Applications/Xcode.app/Contents/Developer"
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skipf("no /usr/bin/git to grant (%v): the shim is found by path, and its \"#!\" line is read", err)
	}
	git := &spec.Resolved{Exec: []spec.Path{{Given: "/usr/bin/git", Resolved: "/usr/bin/git"}}}
	devRule := func(rc *spec.Resolved) bool {
		prof, err := profile(rc, pathRules(rc))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(prof.Text, `(subpath (param "D0"))`) && slices.Contains(prof.Params, paramOf("D0", xcode))
	}

	fakeHost(t, nil, xcode, xcode)
	if !devRule(git) {
		t.Error("xcode-select into Xcode.app: the developer directory is not granted")
	}
	if d := features(Plan(git, true), spec.FeatureExec)[0].Detail; !strings.Contains(d, xcode+": granted") {
		t.Errorf("the plan does not say the developer directory is granted: %s", d)
	}
	if devRule(&spec.Resolved{Exec: []spec.Path{{Given: "/bin/ls", Resolved: "/bin/ls"}}}) {
		t.Error("developer directory granted without an xcrun shim")
	}

	fakeHost(t, map[string]string{"DEVELOPER_DIR": "/Applications/Xcode.app"}, "", "/Applications/Xcode.app", xcode)
	if !devRule(git) {
		t.Error("DEVELOPER_DIR=Xcode.app: Contents/Developer is not granted")
	}
	withEnv := *git
	withEnv.Env = []string{"PATH=/usr/bin"} // the program's own environment, without DEVELOPER_DIR
	if devRule(&withEnv) {
		t.Error("the caller's DEVELOPER_DIR was used for a command with an environment of its own")
	}

	fakeHost(t, nil, "/Library/Developer/CommandLineTools", "/Library/Developer/CommandLineTools")
	if devRule(git) {
		t.Error("the Command Line Tools got a D0 rule (they are fixed text)")
	}

	fakeHost(t, nil, "/Users/dev/ws/Xcode", "/Users/dev/ws/Xcode")
	inWrite := *git
	inWrite.Write = []spec.Path{{Given: "/Users/dev/ws", Resolved: "/Users/dev/ws", IsDir: true}}
	if devRule(&inWrite) {
		t.Error("a developer directory inside a write path was granted")
	}
	if d := features(Plan(&inWrite, true), spec.FeatureExec)[0].Detail; !strings.Contains(d, "not granted, so the xcrun tools fail") {
		t.Errorf("the plan does not report the developer directory it refused: %s", d)
	}
}

// TestDarwinControllingTerminal: Run's terminal is its program's
// controlling terminal, so /dev/tty gets ioctl with it, never without.
func TestDarwinControllingTerminal(t *testing.T) {
	dir := safeDir(t)
	_, link := testTool(t, dir)
	const rule = `(allow file-ioctl (literal "/dev/tty"))`
	cmd := exec.Command(link)
	if err := wrapCommand(cmd, spec.Config{}, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cmd.Args[2], rule) {
		t.Error("ioctl on /dev/tty without Run's terminal")
	}
	cmd = exec.Command(link)
	if err := WrapCommand(cmd, spec.Config{}, nil, "/dev/ttys007"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmd.Args[2], rule) {
		t.Errorf("Run's controlling terminal: no %s", rule)
	}
}

// paramOf is a seatbelt parameter.
func paramOf(name, value string) seatbelt.Param { return seatbelt.Param{Name: name, Value: value} }

// TestDarwinGitDirsAt: the git directories a ".git" file at the top of a
// write path names (and their commondir), and a write path that is a bare
// repository, join the git deny when the regular expressions miss them and
// they lie in a write path.
func TestDarwinGitDirsAt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Seatbelt profile takes POSIX paths; Windows paths cannot appear in one")
	}
	files := map[string]string{
		"/Users/dev/ws/.git":               "gitdir: .gitdata\n",
		"/Users/dev/ws/.gitdata/commondir": "../common\n",
		"/Users/dev/bare/HEAD":             "ref: refs/heads/main\n",
		"/Users/dev/wt/.git":               "gitdir: /Users/dev/main/.git/worktrees/wt\n",
		"/Users/dev/out/.git":              "gitdir: /Users/dev/elsewhere/gd\n",
	}
	fakeHost(t, nil, "", "/Users/dev/bare/objects", "/Users/dev/bare/refs")
	host.readSmall = func(p string) (string, error) {
		if s, ok := files[p]; ok {
			return s, nil
		}
		return "", fs.ErrNotExist
	}
	roots := []string{"/Users/dev/ws", "/Users/dev/bare", "/Users/dev/wt", "/Users/dev/out"}
	want := []string{"/Users/dev/ws/.gitdata", "/Users/dev/ws/common", "/Users/dev/bare"}
	if got, unusable := gitDirsAt(roots); !slices.Equal(got, want) || len(unusable) > 0 {
		t.Errorf("gitDirsAt = %q, want %q (a worktree under .git/worktrees is the regex's; a git directory outside the write paths is not writable)", got, want)
	}
	rc := &spec.Resolved{}
	for _, r := range roots {
		rc.Write = append(rc.Write, spec.Path{Given: r, Resolved: r, IsDir: true})
	}
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []seatbelt.Param{{Name: "G0", Value: want[0]}, {Name: "G1", Value: want[0] + "/hooks"}, {Name: "G5", Value: want[1]}, {Name: "G10", Value: want[2]}} {
		if !slices.Contains(prof.Params, p) {
			t.Errorf("params lack %v: %v", p, prof.Params)
		}
	}
	if g := features(Plan(rc, true), spec.FeatureGitProtect); len(g) != 1 || !strings.Contains(g[0].Detail, want[0]) || !strings.Contains(g[0].Detail, want[2]) {
		t.Errorf("git_protection does not name the git directories it found: %+v", g)
	}
	// One a profile cannot name: reported, not enforced, and the profile
	// is still made.
	files["/Users/dev/odd/.git"] = "gitdir: a\x01b\n"
	rc.Write = append(rc.Write, spec.Path{Given: "/Users/dev/odd", Resolved: "/Users/dev/odd", IsDir: true})
	if _, err := profile(rc, pathRules(rc)); err != nil {
		t.Errorf("a git directory a profile cannot name broke the profile: %v", err)
	}
	if g := features(Plan(rc, true), spec.FeatureGitProtect); len(g) != 2 || g[1].Enforced || !strings.Contains(g[1].Detail, `"/Users/dev/odd/a\x01b"`) {
		t.Errorf("git_protection does not report the git directory it cannot protect: %+v", g)
	}
	rc.Config.NoGitProtection = true
	if prof, _ := profile(rc, pathRules(rc)); slices.ContainsFunc(prof.Params, func(p seatbelt.Param) bool { return strings.HasPrefix(p.Name, "G") }) {
		t.Error("no_git_protection: git directories still denied")
	}
}
