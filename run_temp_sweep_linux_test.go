package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// envTempCaller marks the helper run of TestRunSweepsKilledCallersTemp: a
// caller that starts a Run and is killed in the middle of it. Its value is
// a directory the program writes its TMPDIR to.
const envTempCaller = "SANDBOX_TEMP_CALLER_OUT"

// envSweepRun marks the other helper run of TestRunSweepsKilledCallersTemp:
// a process started after the caller was killed, whose first Run sweeps.
const envSweepRun = "SANDBOX_TEMP_SWEEP_RUN"

// TestRunSweepsKilledCallersTemp: a caller killed mid-Run leaves its
// temporary directory (the program made part of it unlistable and put a
// link to a victim directory in it); the first Run of a process started
// after (a re-executed child of this test) removes it, without following
// the link. Kept: the directory of a live caller (this process, and
// another live process), one of a dead caller owned by another user, and
// a link bearing a dead caller's name. Before, the killed caller's
// directory stayed for good. (That a process sweeps at its first Run and
// then at most once per interval: TestSweepDue in internal/runtemp.)
func TestRunSweepsKilledCallersTemp(t *testing.T) {
	if out := os.Getenv(envTempCaller); out != "" {
		tempCaller(t, out)
		return
	}
	if os.Getenv(envSweepRun) != "" {
		sweepingRun(t)
		return
	}
	requireSandbox(t)
	checkSweep(t)
}

func TestRunSweepsKilledCallersTempAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	checkSweep(t)
}

// tempCaller is the helper: it runs a program that reports its TMPDIR,
// shapes it, and sleeps until the test kills this process.
func tempCaller(t *testing.T, out string) {
	cfg := sandbox.Config{AllowedWritePaths: []string{out}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	script := `mkdir -p "$TMPDIR/a/b" && echo x > "$TMPDIR/a/b/f" && chmod 0 "$TMPDIR/a" && ln -s "$VICTIM" "$TMPDIR/victim" && echo "$TMPDIR" > "$OUT/tmp.new" && mv "$OUT/tmp.new" "$OUT/tmp" && exec sleep 60`
	sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script},
		sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin", "OUT=" + out, "VICTIM=" + os.Getenv("SANDBOX_TEMP_VICTIM")}})
	t.Fatal("the helper's Run returned: it should have been killed first")
}

// sweepingRun is the helper of a process started after the caller was
// killed: its first Run, which sweeps.
func sweepingRun(t *testing.T) {
	res, err := sandbox.Run(context.Background(), sandbox.Config{}, "/bin/sh", []string{"-c", "true"}, sandbox.RunOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the first Run: %v, exit %d, %s", err, res.ExitCode, res.Stderr)
	}
	t.Log("first Run done")
}

func checkSweep(t *testing.T) {
	for _, p := range []string{"/bin/sh", "/bin/sleep", "/bin/mkdir", "/bin/chmod", "/bin/ln", "/bin/mv"} {
		need(t, p, "coreutils")
	}
	base := realTempDir(t)
	out, victim := filepath.Join(base, "out"), filepath.Join(base, "victim")
	for _, d := range []string{out, victim} {
		os.Mkdir(d, 0o777)
	}
	os.Chmod(out, 0o777)
	victimFile := filepath.Join(victim, "keep")
	os.WriteFile(victimFile, []byte("keep"), 0o644)

	left := killedCallerTemp(t, out, victim)

	keep := plantKept(t, left, victim)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	next := exec.Command(self, "-test.run=^TestRunSweepsKilledCallersTemp$", "-test.count=1", "-test.v")
	next.Env = append(os.Environ(), envSweepRun+"=1")
	if out, err := next.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("first Run done")) {
		t.Fatalf("the next process's first Run: %v\n%s", err, out)
	}
	if _, err := os.Lstat(left); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed caller's %s is still there after the next process's first Run: %v", left, err)
	}
	if b, err := os.ReadFile(victimFile); err != nil || string(b) != "keep" {
		t.Errorf("the victim the link pointed at changed: %q, %v", b, err)
	}
	for _, k := range keep {
		if _, err := os.Lstat(k); err != nil {
			t.Errorf("%s was removed: %v", k, err)
		}
	}
}

// plantKept makes, beside the killed caller's directory left, what the
// sweep must keep, and returns it: a live caller's directory (this
// process's, and another live process's), one of a dead caller owned by
// someone else, a link named for a dead caller.
func plantKept(t *testing.T, left, victim string) []string {
	t.Helper()
	tmp := filepath.Dir(left)
	ns, pid, start := ownerOf(t, os.Getpid())
	live := filepath.Join(tmp, fmt.Sprintf("sandbox-run-%d-%d-%d-1", ns, pid, start))
	killedName := filepath.Base(left)
	parts := strings.Split(strings.TrimPrefix(killedName, "sandbox-run-"), "-")
	if len(parts) != 4 {
		t.Fatalf("the killed caller's directory %s is not named for its caller", killedName)
	}
	deadPrefix := filepath.Join(tmp, "sandbox-run-"+parts[0]+"-"+parts[1]+"-"+parts[2]+"-")
	link := deadPrefix + "9"
	// And another live process's, not only the sweeper's own.
	other := exec.Command("/bin/sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	_, opid, ostart := ownerOf(t, other.Process.Pid)
	otherLive := filepath.Join(tmp, fmt.Sprintf("sandbox-run-%d-%d-%d-2", ns, opid, ostart))
	keep := []string{live, otherLive, link}
	os.Mkdir(live, 0o700)
	os.Mkdir(otherLive, 0o700)
	os.Symlink(victim, link)
	if os.Geteuid() == 0 {
		foreign := deadPrefix + "8"
		os.Mkdir(foreign, 0o700)
		os.Chown(foreign, 65534, 65534)
		keep = append(keep, foreign)
	}
	t.Cleanup(func() {
		for _, k := range keep {
			os.RemoveAll(k)
		}
	})

	return keep
}

// killedCallerTemp starts a caller that runs a program under Run, waits
// until the program reported its TMPDIR (having shaped it), kills the
// caller, and returns the Run temporary directory it left.
func killedCallerTemp(t *testing.T, out, victim string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	caller := exec.Command(self, "-test.run=^TestRunSweepsKilledCallersTemp$", "-test.count=1")
	caller.Env = append(os.Environ(), envTempCaller+"="+out, "SANDBOX_TEMP_VICTIM="+victim)
	var stderr bytes.Buffer
	caller.Stderr = &stderr
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	var left string
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(out, "tmp")); err == nil {
			left = filepath.Dir(strings.TrimSpace(string(b)))
			break
		}
	}
	caller.Process.Kill()
	caller.Wait()
	if left == "" {
		t.Fatalf("the helper's program never reported its TMPDIR; helper stderr:\n%s", stderr.String())
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(left, "tmp", "a"), 0o700); os.RemoveAll(left) })
	if _, err := os.Lstat(left); err != nil {
		t.Fatalf("the killed caller's %s is not there to sweep: %v", left, err)
	}

	return left
}

// ownerOf returns the PID namespace, PID and start time of process pid.
func ownerOf(t *testing.T, pid int) (ns uint64, p int, start uint64) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		t.Skipf("no PID namespace identity here: %v", err)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return st.Ino, pid, start
}

// TestRunTempDirAsNobody is TestRunTempDir as nobody, where the
// directory the program made unlistable (chmod 0) binds the removal: Run
// makes it listable through its own descriptor, never following a link,
// and removes everything.
func TestRunTempDirAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	TestRunTempDir(t)
}
