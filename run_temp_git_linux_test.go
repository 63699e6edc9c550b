package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// TestRunTempNotGitWalked: Run's own temporary directory is not looked at
// for repositories (spec.Config.RunTemp): a repository the program makes
// there is removed with the directory, so it is neither protected nor
// reported, while the same repository made in the workspace (a write path
// of the Config) is reported as before.
func TestRunTempNotGitWalked(t *testing.T) {
	requireNamespaces(t)
	need(t, "/usr/bin/git", "git")
	ws := nsWorkspace(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	script := `git init -q "$TMPDIR/r" && git init -q "$PWD/deep/r" && printf %s "$TMPDIR"`
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script},
		sandbox.RunOptions{Dir: ws, Env: depthGitEnv[:len(depthGitEnv):len(depthGitEnv)]})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v, exit %d, stderr %s", err, res.ExitCode, res.Stderr)
	}
	tmp := string(res.Stdout)
	if !filepath.IsAbs(tmp) {
		t.Fatalf("the program's TMPDIR: %q", tmp)
	}
	if _, err := os.Lstat(tmp); !os.IsNotExist(err) {
		t.Errorf("Run's temporary directory %s is still there (%v)", tmp, err)
	}
	var reported []string
	reported = append(reported, res.GitCreated...)
	for _, f := range res.Findings {
		reported = append(reported, f.Path)
	}
	t.Logf("reported: %q", reported)
	deep := false
	for _, p := range reported {
		if strings.HasPrefix(p, tmp+"/") || p == tmp {
			t.Errorf("reported a repository in Run's own temporary directory, which Run removes: %s", p)
		}
		deep = deep || strings.HasPrefix(p, filepath.Join(ws, "deep", "r"))
	}
	if !deep {
		t.Errorf("the repository made in the workspace was not reported: %q", reported)
	}
}
