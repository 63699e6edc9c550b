package childtest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ThreadStatus returns the fields of /proc/self/task/TID/status of every
// thread of this process ("NoNewPrivs", "Seccomp", "CapEff", ...: the
// value trimmed), by TID, for tests that check a property every thread
// must have. A thread that exits between the listing and its read is left
// out; ThreadStatus fails t if it finds no thread.
func ThreadStatus(t testing.TB) map[string]map[string]string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, task := range tasks {
		f, err := os.Open(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread exited
		}
		fields := map[string]string{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
				fields[k] = strings.TrimSpace(v)
			}
		}
		f.Close()
		out[task.Name()] = fields
	}
	if len(out) == 0 {
		t.Fatal("no thread's status read from /proc/self/task")
	}
	return out
}
