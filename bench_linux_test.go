//go:build linux

package sandbox_test

// Benchmarks of spawning and confining. They report costs; the targets
// (ratios) are checked by reading the numbers, not by failing a test:
//
//	go test -run '^$' -bench . -benchtime 2s .
//
// bench/spawn.sh compares the spawn against bwrap and go-landlock's
// landlock-restrict.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/bpf"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/seccomp"
)

// Helper modes (see helperMain) that measure inside a child and print
// nanoseconds, in the one registry of helper modes (childHelpers).
func init() {
	maps.Copy(childHelpers, map[string]func(args []string) int{
		// apply: the time of one ApplySelf(Config{}).
		"apply": func([]string) int {
			start := time.Now()
			if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
				fmt.Fprintln(os.Stderr, "ApplySelf:", err)
				return 3
			}
			fmt.Println(time.Since(start).Nanoseconds())
			return 0
		},
		// getpid N MODE: N getpid calls without, then with the sandbox's
		// filters (MODE "sandbox") or with one filter that allows everything
		// (MODE "floor": what any seccomp filter costs on this kernel).
		"getpid": func(args []string) int {
			n, _ := strconv.Atoi(args[0])
			loop := func() int64 {
				start := time.Now()
				for range n {
					syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
				}
				return time.Since(start).Nanoseconds()
			}
			loop() // warm up
			bare := loop()
			if args[1] == "floor" {
				allowAll := seccomp.Filter{Name: "allow", Program: []bpf.RawInstruction{{Op: 0x06, K: 0x7fff0000}}}
				if err := seccomp.Load(allowAll); err != nil {
					fmt.Fprintln(os.Stderr, "seccomp:", err)
					return 3
				}
			} else if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
				fmt.Fprintln(os.Stderr, "ApplySelf:", err)
				return 3
			}
			loop()
			filtered := loop()
			fmt.Println(bare, filtered)
			return 0
		},
	})
}

func benchHelper(b *testing.B, args ...string) []int64 {
	b.Helper()
	out, err := exec.Command(os.Args[0], append([]string{helperArg}, args...)...).Output()
	if err != nil {
		b.Fatalf("helper %v: %v", args, err)
	}
	var ns []int64
	for _, f := range strings.Fields(string(out)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("helper output %q", out)
		}
		ns = append(ns, v)
	}
	return ns
}

func requireSandboxB(b *testing.B) {
	if st := sandbox.Probe(); !st.Active {
		b.Skipf("sandbox unavailable on this kernel: %s", st.Reason)
	}
}

// BenchmarkSpawnBare is the reference: exec.Command("/bin/true").Run().
func BenchmarkSpawnBare(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpawnWrapped is the same spawn through WrapCommand (here the
// trampoline is this test binary, much larger than a typical host).
func BenchmarkSpawnWrapped(b *testing.B) {
	requireSandboxB(b)
	sb := sandbox.New()
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrapCommand is WrapCommand alone, the parent's part of a wrapped
// spawn (policy, target checks, payload), without starting anything.
func BenchmarkWrapCommand(b *testing.B) {
	requireSandboxB(b)
	sb := sandbox.New()
	for b.Loop() {
		if err := sb.WrapCommand(exec.Command("/bin/true"), sandbox.Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTrue is Run of /bin/true: WrapCommand plus Run's session,
// failure pipe and output capture.
func BenchmarkRunTrue(b *testing.B) {
	requireSandboxB(b)
	for b.Loop() {
		res, err := sandbox.Run(context.Background(), sandbox.Config{}, "/bin/true", nil, sandbox.RunOptions{})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkRunCgroup is the per-tree cost of the tree's cgroup under Run,
// against Run without one, in the same run: "none" runs /bin/true with no
// limits and no spawn (no cgroup); "limits" with Processes and MemoryBytes
// (a cgroup with pids.max and a memory limit: on cgroup v1 a directory in
// the pids, memory and freezer hierarchies); "spawn" with spawn allowed and
// no limits (a cgroup only for the kill: the v1 freezer); "spawn-nocgroup"
// the same with detection pointed at no cgroup (the session scan's kill).
// Interleave
// rounds (bench/cgroup.sh) on a loaded machine.
func BenchmarkRunCgroup(b *testing.B) {
	requireSandboxB(b)
	cases := []struct {
		name string
		cfg  sandbox.Config
	}{
		{"none", sandbox.Config{}},
		{"limits", sandbox.Config{Limits: sandbox.Limits{Processes: 64, MemoryBytes: 256 << 20}}},
		{"spawn", sandbox.Config{AllowProcessSpawn: true}},
		{"spawn-nocgroup", sandbox.Config{AllowProcessSpawn: true}},
	}
	empty := filepath.Join(b.TempDir(), "mountinfo")
	os.WriteFile(empty, nil, 0o600)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "spawn-nocgroup" {
				// Detection finds no cgroup: the session scan kills.
				defer sandbox.SetCgroupOptions(empty, "")()
			}
			for b.Loop() {
				res, err := sandbox.Run(context.Background(), c.cfg, "/bin/true", nil, sandbox.RunOptions{})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkApplySelf reports, as ns/op, the time ApplySelf(Config{}) takes
// in a fresh child (it cannot be repeated in one process). Target: 0.5 ms.
func BenchmarkApplySelf(b *testing.B) {
	requireSandboxB(b)
	var total int64
	n := 0
	for b.Loop() {
		total += benchHelper(b, "apply")[0]
		n++
	}
	b.ReportMetric(float64(total)/float64(n), "ns/op")
}

// BenchmarkSeccompGetpid measures getpid in one child before and after the
// sandbox's filters are loaded, and reports both and their ratio (target
// ≤ 1.05). The "floor" sub-benchmark loads a single filter that allows
// everything instead: the cost of any seccomp filter on this kernel, which
// the sandbox's ratio cannot go below.
func BenchmarkSeccompGetpid(b *testing.B) {
	requireSandboxB(b)
	for _, mode := range []string{"sandbox", "floor"} {
		b.Run(mode, func(b *testing.B) {
			ns := benchHelper(b, "getpid", strconv.Itoa(b.N), mode)
			bare, filtered := float64(ns[0])/float64(b.N), float64(ns[1])/float64(b.N)
			b.ReportMetric(bare, "bare-ns/getpid")
			b.ReportMetric(filtered, "filtered-ns/getpid")
			b.ReportMetric(filtered/bare, "ratio")
			b.ReportMetric(filtered, "ns/op")
		})
	}
}
