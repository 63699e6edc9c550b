package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// Git protection at any depth (issue 27). A repository one directory below
// the workspace's top (the quick start's demo/), one deeper below the
// working directory, and an implicit bare repository present at the start
// all get read-only hooks and config, under Run and under WrapCommand, as
// root and as nobody; the rest of each stays writable.

// depthGitEnv is an environment in which git reads no configuration of the
// machine's or the user's.
var depthGitEnv = []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}

func hostGit(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = depthGitEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// depthRepos makes, in ws, demo/ (a repository one level down),
// a/b/deep/ (three levels down) and srv/bare.git (a bare repository).
func depthRepos(t *testing.T, ws string) {
	t.Helper()
	need(t, "/usr/bin/git", "git")
	hostGit(t, "init", "-q", filepath.Join(ws, "demo"))
	hostGit(t, "init", "-q", filepath.Join(ws, "a", "b", "deep"))
	hostGit(t, "init", "-q", "--bare", filepath.Join(ws, "srv", "bare.git"))
}

func TestRunGitDepth(t *testing.T) {
	requireNamespaces(t)
	ws := nsWorkspace(t)
	depthRepos(t, ws)
	checkGitDepth(t, ws)
}

func TestRunGitDepthAsNobody(t *testing.T) {
	requireSandbox(t)
	ws := os.Getenv("SANDBOX_NS_WS")
	if !childtest.InNobodyRun(t) {
		requireRoot(t)
		ws = nsWorkspace(t)
		depthRepos(t, ws)
		chownTree(t, ws, 65534)
		if !childtest.AsNobody(t, "SANDBOX_NS_WS="+ws) {
			return
		}
	}
	requireNamespaces(t)
	checkGitDepth(t, ws)
}

func checkGitDepth(t *testing.T, ws string) {
	protected := []string{
		"demo/.git/hooks/pre-commit", "demo/.git/config",
		"a/b/deep/.git/hooks/pre-commit", "a/b/deep/.git/config",
		"srv/bare.git/hooks/pre-receive", "srv/bare.git/config",
	}
	writable := []string{"demo/file", "a/b/deep/file", "demo/.git/description", "srv/bare.git/description"}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	// Under Run, from the workspace's top (every repository below the
	// working directory) and from a/ (deep/ below it, demo/ beside it).
	for _, dir := range []string{ws, filepath.Join(ws, "a")} {
		var ops []string
		for _, p := range protected {
			ops = append(ops, "write:"+filepath.Join(ws, p))
		}
		for _, p := range writable {
			ops = append(ops, "write:"+filepath.Join(ws, p))
		}
		got := fsops(t, cfg, dir, ops...)
		for _, p := range protected {
			wantOp(t, got, "write:"+filepath.Join(ws, p), syscall.EROFS)
		}
		for _, p := range writable {
			wantOp(t, got, "write:"+filepath.Join(ws, p), 0)
		}
	}
	// Under WrapCommand.
	sh := need(t, "/bin/sh", "dash")
	var script strings.Builder
	for _, p := range protected {
		script.WriteString("if echo x >> " + filepath.Join(ws, p) + "; then echo wrote " + p + "; fi\n")
	}
	cmd := exec.Command(sh, "-c", script.String())
	cmd.Dir = ws
	if err := sandbox.New().WrapCommand(cmd, sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{sh}}); err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	if _, err := sandbox.FinishCommand(cmd); err != nil {
		t.Errorf("FinishCommand: %v", err)
	}
	if strings.Contains(string(out), "wrote") || strings.Count(string(out), "Read-only file system") != len(protected) {
		t.Errorf("WrapCommand: %s\nwant each of %q refused with EROFS", out, protected)
	}
	for _, p := range protected {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); strings.Contains(string(b), "x\n") {
			t.Errorf("%s was written on the host", p)
		}
	}
}

// findingsOf returns the paths of the findings of kind.
func findingsOf(fs []sandbox.Finding, kind string) []string {
	var out []string
	for _, f := range fs {
		if f.Kind == kind {
			out = append(out, f.Path)
		}
	}
	return out
}

// What the program makes after the start is reported once its tree is
// gone: an implicit bare repository at the write path's top (git fetch
// there runs its core.sshCommand: shown by the host's git), a repository
// deep below the working directory (which GitCreated does not cover), and
// a rebase todo list with an exec line in a protected repository.
func TestRunGitDepthFindings(t *testing.T) {
	requireNamespaces(t)
	checkGitDepthFindings(t)
}

func TestRunGitDepthFindingsAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	requireNamespaces(t)
	checkGitDepthFindings(t)
}

func checkGitDepthFindings(t *testing.T) {
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	ws := realTempDir(t)
	top := filepath.Join(ws, "top")
	repo := filepath.Join(ws, "repo")
	os.Mkdir(top, 0o755)
	hostGit(t, "init", "-q", repo)
	hostGit(t, "-C", repo, "commit", "-q", "--allow-empty", "-m", "c")
	marker := filepath.Join(ws, "sshcommand-ran")
	cfg := sandbox.Config{AllowedWritePaths: []string{top, repo}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	script := `set -e
	cd ` + top + `
	mkdir -p objects refs/heads && echo 'ref: refs/heads/main' > HEAD
	printf '[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tsshCommand = "touch ` + marker + `; false"\n[remote "origin"]\n\turl = ssh://example.invalid/x\n' > config
	` + git + ` init -q ` + filepath.Join(repo, "sub", "deeper", "x") + `
	mkdir -p ` + filepath.Join(repo, ".git", "rebase-merge") + `
	printf 'pick 0000000 c\nexec touch /tmp/pwned\n' > ` + filepath.Join(repo, ".git", "rebase-merge", "git-rebase-todo")
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script}, sandbox.RunOptions{Dir: repo, Env: depthGitEnv})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v: exit %d, stderr %s", err, res.ExitCode, res.Stderr)
	}
	t.Logf("findings: %+v", res.Findings)
	if got := findingsOf(res.Findings, sandbox.FindingGitBareRepository); !slices.Equal(got, []string{top}) {
		t.Errorf("%s findings %q, want [%s]", sandbox.FindingGitBareRepository, got, top)
	}
	x := filepath.Join(repo, "sub", "deeper", "x", ".git")
	if got := findingsOf(res.Findings, sandbox.FindingGitRepository); !slices.Equal(got, []string{x}) {
		t.Errorf("%s findings %q, want [%s]", sandbox.FindingGitRepository, got, x)
	}
	todo := filepath.Join(repo, ".git", "rebase-merge", "git-rebase-todo")
	if got := findingsOf(res.Findings, sandbox.FindingGitRebaseExec); !slices.Equal(got, []string{todo}) {
		t.Errorf("%s findings %q, want [%s]", sandbox.FindingGitRebaseExec, got, todo)
	}
	if len(res.GitCreated) != 0 {
		t.Errorf("GitCreated %q: none of these is at a spot it covers", res.GitCreated)
	}
	// The threat is real: the host's git fetch in the bare repository
	// runs the command the program wrote in its config.
	cmd := exec.Command(git, "fetch", "-q", "origin")
	cmd.Dir, cmd.Env = top, depthGitEnv
	cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the host's git fetch in %s did not run the planted core.sshCommand (%v): the threat this test is about is not what it says", top, err)
	}
}

// The walk never follows a symbolic link: a loop back to the workspace
// and a link to a directory outside every grant, holding a repository,
// leave the plan and the run unaffected (the victim's hooks are neither
// protected nor walked), and the walk ends well within a deadline. A .git
// that is a FIFO is reported, never opened.
func TestGitWalkNoFollow(t *testing.T) {
	requireNamespaces(t)
	checkGitWalkNoFollow(t)
}

func TestGitWalkNoFollowAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	requireNamespaces(t)
	checkGitWalkNoFollow(t)
}

func checkGitWalkNoFollow(t *testing.T) {
	need(t, "/usr/bin/git", "git")
	ws := realTempDir(t)
	victim := realTempDir(t)
	hostGit(t, "init", "-q", filepath.Join(victim, "repo"))
	os.Symlink(ws, filepath.Join(ws, "loop"))
	os.Symlink(filepath.Join(victim, "repo"), filepath.Join(ws, "victim"))
	os.Mkdir(filepath.Join(ws, "fifo"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo", ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // links to itself, in a directory of its own
		os.MkdirAll(filepath.Join(ws, "dots"), 0o755)
		os.Symlink(".", filepath.Join(ws, "dots", "l"+string(rune('a'+i))))
	}
	hostGit(t, "init", "-q", filepath.Join(ws, "real"))
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	type result struct {
		plan sandbox.Plan
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := sandbox.PlanFor(cfg)
		done <- result{p, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("PlanFor did not return within 20 s: the walk follows a loop or opens the FIFO")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	var detail string
	for _, f := range r.plan.Features {
		if f.Feature == sandbox.FeatureGitProtect && f.Scope == sandbox.ScopeCommand {
			detail = f.Detail
		}
	}
	if !strings.Contains(detail, filepath.Join(ws, "real", ".git")) {
		t.Errorf("git_protection does not name the real repository: %q", detail)
	}
	if strings.Contains(detail, victim) || strings.Contains(detail, "victim") || strings.Contains(detail, "loop") {
		t.Errorf("git_protection names what lies behind a link: %q", detail)
	}
	for _, l := range r.plan.MountLayer {
		if strings.Contains(l, victim) || strings.Contains(l, "/victim/") || strings.Contains(l, "/loop/") {
			t.Errorf("the mount layer reaches through a link: %s", l)
		}
	}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{Dir: ws, Timeout: 20 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v %+v", err, res)
	}
	if got := findingsOf(res.Findings, sandbox.FindingSpecialFile); !slices.Equal(got, []string{filepath.Join(ws, "fifo", ".git")}) {
		t.Errorf("%s findings %q, want the FIFO", sandbox.FindingSpecialFile, got)
	}
}

// A repository below the top of a writable Mount's source is protected
// where the Mount shows it (the path the program writes through): its
// hooks and config are read-only there, the rest writable.
func TestRunGitDepthMountSource(t *testing.T) {
	requireNamespaces(t)
	need(t, "/usr/bin/git", "git")
	ws := realTempDir(t)
	src := realTempDir(t)
	hostGit(t, "init", "-q", filepath.Join(src, "proj"))
	view := filepath.Join(ws, "view")
	os.Mkdir(view, 0o755)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, Mounts: []sandbox.Mount{{Path: src, At: view, Write: true}}}
	hook, conf, file := filepath.Join(view, "proj", ".git", "hooks", "pre-commit"), filepath.Join(view, "proj", ".git", "config"), filepath.Join(view, "proj", "file")
	got := fsops(t, cfg, ws, "write:"+hook, "write:"+conf, "write:"+file)
	wantOp(t, got, "write:"+hook, syscall.EROFS)
	wantOp(t, got, "write:"+conf, syscall.EROFS)
	wantOp(t, got, "write:"+file, 0)
}
