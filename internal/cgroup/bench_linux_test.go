//go:build linux

package cgroup

import (
	"os"
	"os/exec"
	"testing"
)

// BenchmarkSpawn: the extra cost of a cgroup per tree, against a spawn
// without one, in the same run: "bare" starts and reaps /bin/true; "cgroup"
// also makes a group with a task and a memory limit, moves the child into
// it (Add, after Start: what the child half's write costs is the same
// write), and removes the group (Close: the kill finds it empty, rmdir).
//
//	go test -run '^$' -bench Spawn -benchtime 2s ./internal/cgroup
func BenchmarkSpawn(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	m, err := Detect(Options{})
	if err != nil {
		b.Skip(err)
	}
	if _, err := os.Stat("/bin/true"); err != nil {
		b.Skip("no /bin/true")
	}
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The cgroup's own cost, without a process: make it with the limits,
	// remove it.
	b.Run("group-only", func(b *testing.B) {
		for b.Loop() {
			g, err := m.New(Limits{Pids: 64, MemoryBytes: 256 << 20})
			if err != nil {
				b.Fatal(err)
			}
			if err := g.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cgroup", func(b *testing.B) {
		for b.Loop() {
			g, err := m.New(Limits{Pids: 64, MemoryBytes: 256 << 20})
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command("/bin/true")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			g.Add(cmd.Process.Pid) // may find it gone already: the cost is the same
			cmd.Wait()
			if err := g.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
