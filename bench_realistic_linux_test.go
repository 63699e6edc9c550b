//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// BenchmarkWrapRealistic is the spawn of /bin/true on the Configs users
// pass, against a bare exec.Command, in one process and with each case's
// iterations interleaved with a bare spawn (and, for "realistic", with the
// minimal Config too), so that a ratio is measured under the same load:
//
//	go test -run '^$' -bench WrapRealistic -benchtime 100x -count 3 .
//
// The workspace is a tiny git repository (git init, one file). "minimal"
// is Config{AllowedWritePaths: [ws]}; "realistic" adds AllowedExecPaths
// /usr/bin and /bin and AllowProcessSpawn, as the quick start does. Every
// default stays on (the mount layer, git protection, the reaper where a
// cgroup is made). The Engine is warm: one spawn of each case runs before
// the timer. Metrics: the medians of wrap-ms (WrapCommand, Start, Wait,
// FinishCommand) and run-ms (Run), bare-ms (exec.Command), their ratios to
// bare (wrap-x-bare, run-x-bare), the realistic Config's to the minimal
// one (wrap-x-minimal, run-x-minimal), and run-extra-ms: Run's median
// minus the wrap path's.
func BenchmarkWrapRealistic(b *testing.B) {
	requireSandboxB(b)
	ws := tinyRepo(b)
	minimal := sandbox.Config{AllowedWritePaths: []string{ws}}
	realistic := sandbox.Config{
		AllowedWritePaths: []string{ws},
		AllowedExecPaths:  []string{"/usr/bin", "/bin"},
		AllowProcessSpawn: true,
	}
	sb := sandbox.New()
	bare := func(b *testing.B) time.Duration {
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	wrap := func(b *testing.B, cfg sandbox.Config) time.Duration {
		start := time.Now()
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		if err := sb.WrapCommand(cmd, cfg); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if _, err := sandbox.FinishCommand(cmd); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	run := func(b *testing.B, cfg sandbox.Config) time.Duration {
		start := time.Now()
		res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{Dir: ws})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
		return time.Since(start)
	}
	for _, c := range []struct {
		name string
		cfg  *sandbox.Config
	}{{"bare", nil}, {"minimal", &minimal}, {"realistic", &realistic}} {
		b.Run(c.name, func(b *testing.B) {
			var tb, tw, tr, mw, mr []time.Duration
			if c.cfg != nil { // warm the Engine and the caches
				wrap(b, *c.cfg)
				run(b, *c.cfg)
				if c.cfg == &realistic {
					wrap(b, minimal)
					run(b, minimal)
				}
			}
			for b.Loop() {
				tb = append(tb, bare(b))
				if c.cfg == nil {
					continue
				}
				tw = append(tw, wrap(b, *c.cfg))
				tr = append(tr, run(b, *c.cfg))
				if c.cfg == &realistic {
					mw = append(mw, wrap(b, minimal))
					mr = append(mr, run(b, minimal))
				}
			}
			mb := medianMS(tb)
			b.ReportMetric(mb, "bare-ms")
			if c.cfg == nil {
				return
			}
			w, r := medianMS(tw), medianMS(tr)
			b.ReportMetric(w, "wrap-ms")
			b.ReportMetric(r, "run-ms")
			b.ReportMetric(w/mb, "wrap-x-bare")
			b.ReportMetric(r/mb, "run-x-bare")
			b.ReportMetric(r-w, "run-extra-ms")
			if c.cfg == &realistic {
				b.ReportMetric(w/medianMS(mw), "wrap-x-minimal")
				b.ReportMetric(r/medianMS(mr), "run-x-minimal")
			}
		})
	}
}

// medianMS is the median of ds in milliseconds.
func medianMS(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e6
}

// BenchmarkWrapParent is the parent's own part of BenchmarkWrapRealistic's
// wrap, without starting anything: WrapCommand and FinishCommand of
// /bin/true on the same tiny git repository, warm Engine, for the minimal
// and the realistic Config (sub-benchmarks), so that -benchmem, a CPU
// profile or strace -c count what the caller pays per spawn:
//
//	go test -run '^$' -bench WrapParent -benchmem .
func BenchmarkWrapParent(b *testing.B) {
	requireSandboxB(b)
	ws := tinyRepo(b)
	sb := sandbox.New()
	for _, c := range []struct {
		name string
		cfg  sandbox.Config
	}{
		{"minimal", sandbox.Config{AllowedWritePaths: []string{ws}}},
		{"realistic", sandbox.Config{AllowedWritePaths: []string{ws},
			AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			wrap := func() {
				cmd := exec.Command("/bin/true")
				cmd.Dir = ws
				if err := sb.WrapCommand(cmd, c.cfg); err != nil {
					b.Fatal(err)
				}
				if _, err := sandbox.FinishCommand(cmd); err != nil {
					b.Fatal(err)
				}
			}
			wrap() // warm the Engine and the caches
			for b.Loop() {
				wrap()
			}
		})
	}
}

// tinyRepo is the benchmarks' workspace: a git repository (git init) with
// one file.
func tinyRepo(b *testing.B) string {
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Skipf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return ws
}
