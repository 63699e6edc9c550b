package sandbox_test

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestGitEndNotFinishedClosesPins: WrapCommand pins the git directories
// of a protected repository before the spawn; a command its caller never
// finishes (nor even starts) must not hold those descriptors forever: once
// the command is reclaimed, its session goes and the descriptors are
// closed (the session's cleanup: linux.Command.Drop).
func TestGitEndNotFinishedClosesPins(t *testing.T) {
	if !sandbox.New().Available() {
		t.Skip("no sandbox on this kernel")
	}
	ws := realTempDir(t)
	if out, err := exec.Command("/usr/bin/git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot count descriptors: %v", err)
		}
		return len(ents)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin"}}
	wrapOne := func() *exec.Cmd {
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	wrapOne() // the first pays for what stays (probes, caches)
	for range 5 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	before := count()
	var held []*exec.Cmd // alive until counted
	for range 20 {
		held = append(held, wrapOne())
	}
	if n := count(); n < before+20 {
		t.Fatalf("%d descriptors after 20 WrapCommands, %d before: the pins cannot be observed", n, before)
	}
	runtime.KeepAlive(held)
	held = nil
	deadline := time.Now().Add(10 * time.Second)
	for count() > before+2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors, %d before 20 commands never finished: their pins were not closed", count(), before)
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}
