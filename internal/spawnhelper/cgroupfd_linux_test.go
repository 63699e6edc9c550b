//go:build linux && (amd64 || arm64)

package spawnhelper

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// The helper joins the tree's cgroup before anything else and fails
// closed: a cgroup.procs descriptor it cannot write ends it with status
// 125 before the target runs, and one below FirstFD (which the target
// would inherit) is refused as a bad invocation.
func TestHelperCgroupFDsFailClosed(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "helper")
	if err := os.WriteFile(bin, image, 0o755); err != nil {
		t.Fatal(err)
	}
	target, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to be the target")
	}
	ro, err := os.Open(os.DevNull) // not writable: write fails with EBADF
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, c := range []struct {
		name    string
		firstFD int
		fds     []int
		want    string
	}{
		{"unwritable", 4, []int{4}, "write cgroup.procs: bad file descriptor"},
		{"second of two unwritable", 4, []int{5, 4}, "write cgroup.procs: bad file descriptor"},
		{"below FirstFD", 4, []int{3}, "bad cgroup descriptor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &trampoline.Payload{Path: target, Env: []string{"A=1"}, FirstFD: c.firstFD, ErrFD: -1, CgroupFDs: c.fds}
			pr, pw, err := os.Pipe() // the write end is fd 5: writable, so only fd 4 fails
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			cmd := exec.Command(bin, "true")
			cmd.Args[0] = trampoline.Arg0
			cmd.Env = p.Environ()
			// fd 3: anything the target may keep; fd 4: read-only; fd 5: a pipe's write end.
			cmd.ExtraFiles = []*os.File{ro, ro, pw}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.Run()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if ws.ExitStatus() != 125 || !strings.Contains(out.String(), c.want) {
				t.Errorf("%v %q, want exit 125 and %q (the target must not run)", ws, out.String(), c.want)
			}
		})
	}
}
