//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// marked returns the PIDs of live processes whose environment holds kv.
func marked(kv string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+kv+"\x00")) {
			continue
		}
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestRunKillsForkChain: a chain of processes that each start a successor
// and exit does not outrun Run's kill (before the stop-then-kill loop, 3 of
// 4 runs left one alive).
func TestRunKillsForkChain(t *testing.T) {
	requireSandbox(t)
	sh := need(t, "/bin/sh", "dash")
	forkChainRuns(t, sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}})
}

// forkChainRuns runs, four times, a shell whose every process starts a
// successor and exits, until Run's timeout kills the tree, and fails if
// any process of it is left.
func forkChainRuns(t *testing.T, cfg sandbox.Config) {
	sh := cfg.AllowedExecPaths[0]
	for i := range 4 {
		mark := "SANDBOX_CHAIN_TEST=" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(i)
		script := `chain() { chain & }; chain; while :; do :; done`
		res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script},
			sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin", mark}, Timeout: 300 * time.Millisecond})
		if err == nil {
			t.Fatalf("run %d: the chain ended on its own? %+v", i, res)
		}
		// Anything left would go on forking: look for a while.
		for range 20 {
			if left := marked(mark); len(left) > 0 {
				for _, pid := range left {
					st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
					t.Logf("left: %s", st)
					killStray(pid)
				}
				t.Fatalf("run %d: processes of the run outlived it: %v", i, left)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestRunKillsForkChainBySessionScan: the same chain where neither a
// cgroup nor a PID namespace can stop the tree (detection pointed at no
// cgroup, namespaces refused by a seccomp filter in this child process):
// Run's last fallback, the session scan (SIGSTOP every process of the
// session until a scan finds none running, then SIGKILL), ends it.
func TestRunKillsForkChainBySessionScan(t *testing.T) {
	requireSandbox(t)
	need(t, "/bin/sh", "dash")
	empty := childtest.Share(t, func() string {
		p := filepath.Join(t.TempDir(), "mountinfo")
		os.WriteFile(p, nil, 0o644)
		return p
	})
	childtest.Run(t, func(t *testing.T) {
		defer sandbox.SetCgroupOptions(empty, "")()
		refuseNamespaces(t)
		cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin/sh"}}
		p, err := sandbox.PlanFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if p.MountLayer != nil {
			t.Fatalf("the namespaces are still available: %v", p.MountLayer)
		}
		forkChainRuns(t, cfg)
	})
}

// killStray ends a process this test started and that outlived Run.
func killStray(pid int) { p, _ := os.FindProcess(pid); p.Kill() }
