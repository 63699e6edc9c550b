//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// BenchmarkWrapFloor takes the minimal Config's wrapped spawn of /bin/true
// apart, to show in one run which share of it is the child half's kernel
// work and which the caller's:
//
//	go test -run '^$' -bench WrapFloor -benchtime 100x -count 3 .
//
// Each iteration spawns, in turn: bare (exec.Command), "confine" (the
// child half with the same Landlock rules and capability drop but no
// seccomp filter and no namespace), "seccomp" (plus the filter), "child"
// (the command exactly as WrapCommand made it: plus the user, mount and
// IPC namespaces and the mount layer's steps), and "wrap" (WrapCommand,
// Start, Wait and FinishCommand, as BenchmarkWrapRealistic's minimal
// case). The first four are timed from Start to Wait only, on a command
// WrapCommand made before the timer (FinishCommand runs after, untimed).
// Metrics: each one's median in ms and its ratio to bare (X-x-bare).
// "child" ÷ bare is the floor the child half sets for the minimal
// Config's spawn (a second executable, the confinement steps, the
// namespace step), "wrap" ÷ "child" the caller's own share.
//
// The ablated variants exist only here: the sandbox never starts a child
// half without its filter or namespaces when the Config asks for them.
func BenchmarkWrapFloor(b *testing.B) {
	requireSandboxB(b)
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Skipf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	sb := sandbox.New()

	wrapped := func(b *testing.B, strip func(*exec.Cmd, *trampoline.Payload)) *exec.Cmd {
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		if err := sb.WrapCommand(cmd, cfg); err != nil {
			b.Fatal(err)
		}
		if strip == nil {
			return cmd
		}
		p, err := trampoline.FromEnviron(cmd.Env)
		if err != nil {
			b.Fatalf("the wrapped command has no payload: %v", err)
		}
		strip(cmd, p)
		cmd.Env = append(slices.DeleteFunc(cmd.Env, trampoline.Reserved), p.Environ()...)
		return cmd
	}
	noNamespaces := func(cmd *exec.Cmd, p *trampoline.Payload) {
		p.Flags &^= trampoline.FlagNamespaces
		p.Mounts, p.Net = nil, trampoline.NetStep{}
		a := cmd.SysProcAttr
		a.Cloneflags &^= syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID
		a.UidMappings, a.GidMappings, a.GidMappingsEnableSetgroups = nil, nil, false
		a.AmbientCaps = nil // a non-root caller's are its user namespace's
	}
	variants := []struct {
		name  string
		strip func(*exec.Cmd, *trampoline.Payload)
	}{
		{"confine", func(cmd *exec.Cmd, p *trampoline.Payload) { noNamespaces(cmd, p); p.Filters = nil }},
		{"seccomp", noNamespaces},
		{"child", nil},
	}
	timed := func(b *testing.B, cmd *exec.Cmd) time.Duration {
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", cmd.Args, err)
		}
		d := time.Since(start)
		if _, err := sandbox.FinishCommand(cmd); err != nil {
			b.Fatal(err)
		}
		return d
	}
	bare := func(b *testing.B) time.Duration {
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	wrap := func(b *testing.B) time.Duration {
		start := time.Now()
		cmd := wrapped(b, nil)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if _, err := sandbox.FinishCommand(cmd); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}

	// Warm the Engine and check that every variant runs.
	wrap(b)
	for _, v := range variants {
		timed(b, wrapped(b, v.strip))
	}
	times := make([][]time.Duration, len(variants))
	var tb, tw []time.Duration
	for b.Loop() {
		tb = append(tb, bare(b))
		for i, v := range variants {
			times[i] = append(times[i], timed(b, wrapped(b, v.strip)))
		}
		tw = append(tw, wrap(b))
	}
	mb := medianMS(tb)
	b.ReportMetric(mb, "bare-ms")
	for i, v := range variants {
		m := medianMS(times[i])
		b.ReportMetric(m, v.name+"-ms")
		b.ReportMetric(m/mb, v.name+"-x-bare")
	}
	mw := medianMS(tw)
	b.ReportMetric(mw, "wrap-ms")
	b.ReportMetric(mw/mb, "wrap-x-bare")
	b.ReportMetric(mw/medianMS(times[len(times)-1]), "wrap-x-child")
}
