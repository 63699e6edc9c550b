//go:build darwin

package darwin

// The host half on macOS: whether sandbox-exec is there and works, and the
// kernel's own spelling of a path (canonicalPath).

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/rawsys"
	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// SandboxExec is nil when /usr/bin/sandbox-exec exists, is executable, and
// applies a trivial profile; asked once. The trial run is what tells a
// process already inside a Seatbelt sandbox (where sandbox-exec fails with
// forbidden-sandbox-reinit, so every wrap would) from one that can wrap.
func SandboxExec() error { return sandboxExec() }

var sandboxExec = sync.OnceValue(func() error {
	if err := checkSandboxExec(seatbelt.SandboxExecPath); err != nil {
		return err
	}
	return trialSandboxExec()
})

// trialSandboxExec runs /usr/bin/true under the trial profile
// (trialArgs), with an empty environment and a time limit.
func trialSandboxExec() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, seatbelt.SandboxExecPath, trialArgs...)
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return trialError(err, stderr.String())
}

// PlanHere is [Plan] on this Mac: available when [SandboxExec] is nil, and
// otherwise with its error as the reason.
func PlanHere(rc *spec.Resolved) spec.Plan {
	p := Plan(rc, sandboxExec() == nil)
	if err := sandboxExec(); err != nil {
		p.Reason = err.Error()
	}
	return p
}

func init() { canonicalPath = getPath }

// getPath is canonicalPath on macOS: the path fcntl(F_GETPATH) reports
// for p opened with O_EVTONLY (no read permission needed), O_NOFOLLOW and
// O_NONBLOCK (an exec-listed FIFO does not block). p itself when it cannot
// be opened, or the answer is not a clean absolute path that canonicalAlias
// accepts as another spelling of p.
func getPath(p string) string {
	fd, err := unix.Open(p, unix.O_EVTONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return p
	}
	defer unix.Close(fd)
	got, errno := rawsys.FcntlGetpath(fd)
	if errno == 0 && filepath.IsAbs(got) && filepath.Clean(got) == got && canonicalAlias(p, got) {
		return got
	}
	return p
}
