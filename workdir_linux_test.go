package sandbox_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox"
)

// TestRunAndWrapBadDir: a working directory that does not exist, or is not
// a directory, is reported by its name before anything runs (as os/exec's
// "chdir DIR" would), never as the failed exec of the child half's
// /proc/self/fd path; WrapCommand fails closed with cmd.Err set.
func TestRunAndWrapBadDir(t *testing.T) {
	requireSandbox(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.Config{AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	for _, c := range []struct {
		dir  string
		want error
	}{{"/nonexistent", fs.ErrNotExist}, {file, syscall.ENOTDIR}} {
		check := func(how string, err error) {
			t.Helper()
			switch {
			case err == nil:
				t.Errorf("%s with Dir %s: no error", how, c.dir)
			case !strings.Contains(err.Error(), "working directory "+c.dir+": "):
				t.Errorf("%s with Dir %s: %v, want the directory named", how, c.dir, err)
			case strings.Contains(err.Error(), "/proc/self/fd"):
				t.Errorf("%s with Dir %s: %v names the child half", how, c.dir, err)
			case !errors.Is(err, c.want):
				t.Errorf("%s with Dir %s: %v, want errors.Is %v", how, c.dir, err, c.want)
			}
		}
		res, err := sandbox.Run(context.Background(), cfg, "true", nil, sandbox.RunOptions{Dir: c.dir})
		check("Run", err)
		if res.ExitCode != -1 {
			t.Errorf("Run with Dir %s: exit code %d, want -1 (nothing ran)", c.dir, res.ExitCode)
		}

		cmd := exec.Command("/bin/true")
		cmd.Dir = c.dir
		check("WrapCommand", sandbox.New().WrapCommand(cmd, cfg))
		if err := cmd.Start(); err == nil {
			cmd.Wait()
			t.Errorf("Start after WrapCommand refused Dir %s: started", c.dir)
		} else {
			check("Start after WrapCommand", err)
		}
	}
}
