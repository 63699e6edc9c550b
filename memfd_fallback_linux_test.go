//go:build linux

package sandbox_test

// A real program's memfd fallback under Run (issue 14): OpenJDK's Z
// garbage collector keeps the Java heap in a memfd and, when
// memfd_create fails, in a file on a tmpfs mount such as /dev/shm.

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestRunMemfdFallbackZGC runs `java -XX:+UseZGC -version` under Run with
// an exec allowlist, so that exec is possible and the filter's memfd rule
// is in place (internal/seccomp, enosysSpec). What was checked with strace
// (OpenJDK 17.0.15 of Debian 12, Linux 6.18):
//
//   - unconfined: memfd_create("java_heap", MFD_CLOEXEC) = 4, and the log
//     says "Heap Backing File: /memfd:java_heap";
//   - confined: memfd_create("java_heap", MFD_CLOEXEC) = -1 ENOSYS, then
//     open("/dev/shm", O_RDWR|O_EXCL|O_CLOEXEC|O_TMPFILE, 0600), and the
//     log says "Failed to create memfd file (Function not supported)"
//     (HotSpot's own text for ENOSYS: EPERM would read "Operation not
//     permitted") and "Heap Backing File: /dev/shm/#<inode>".
//
// The JDK asks for neither MFD_NOEXEC_SEAL nor MFD_EXEC, so on Linux 6.3+
// with vm.memfd_noexec=0 (the default) its memfd would be executable: the
// rule refuses it on every kernel. The fallback file is Landlock's to
// check: without allow_shared_memory it lands in the mount layer's
// private /dev/shm (the default where namespaces are available: the JVM
// starts), and where the layer is unavailable the JVM does not start
// (second subtest), which is what a user of ZGC there sees.
//
// The test asserts the outcome from the JVM's own log (-Xlog:gc+init=debug),
// with an unconfined control that shows the memfd is used when nothing
// refuses it, so the confined run's fallback is the sandbox's doing.
func TestRunMemfdFallbackZGC(t *testing.T) {
	requireSandbox(t)
	java, err := filepath.EvalSymlinks(need(t, "/usr/bin/java", "openjdk-17-jre-headless"))
	if err != nil {
		t.Fatal(err)
	}
	javaHome := filepath.Dir(filepath.Dir(java)) // JAVA_HOME/bin/java
	// -XX:-UsePerfData: no hsperfdata file in /tmp (not granted; the JVM
	// would only warn).
	args := []string{"-XX:+UseZGC", "-XX:-UsePerfData", "-Xlog:gc+init=debug", "-version"}

	ctl := exec.Command(java, args...)
	ctl.Env = []string{}
	out, err := ctl.CombinedOutput()
	if err != nil {
		t.Fatalf("unconfined control: %s %s: %v\n%s", java, strings.Join(args, " "), err, out)
	}
	if !strings.Contains(string(out), "Heap Backing File: /memfd:java_heap") {
		if line := logLine(string(out), "Failed to create memfd file"); line != "" {
			// vm.memfd_noexec=2 refuses it on the host already: the
			// filter's rule would not be what makes the JVM fall back.
			t.Skipf("memfd_create fails for this JVM without the sandbox too, so the test cannot show the filter's effect: %s", line)
		}
		t.Fatalf("unconfined control: the JVM did not put its heap in a memfd:\n%s", out)
	}

	run := func(t *testing.T, shm bool) (sandbox.RunResult, string) {
		t.Helper()
		cfg := sandbox.Config{
			AllowedReadPaths:  []string{javaHome},
			AllowedExecPaths:  []string{java},
			AllowSharedMemory: shm,
		}
		res, err := sandbox.Run(context.Background(), cfg, java, args, sandbox.RunOptions{Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return res, string(res.Stdout) + string(res.Stderr)
	}

	t.Run("allow_shared_memory", func(t *testing.T) {
		res, got := run(t, true)
		t.Logf("confined, exit %d:\n%s", res.ExitCode, got)
		if res.ExitCode != 0 || !strings.Contains(got, "version \"") {
			t.Fatalf("the JVM did not start (exit %d, %s)", res.ExitCode, res.State)
		}
		if line := logLine(got, "Failed to create memfd file"); line == "" || !strings.HasSuffix(line, "(Function not supported)") {
			t.Errorf("memfd_create: want HotSpot's ENOSYS message \"Failed to create memfd file (Function not supported)\", got %q", line)
		}
		if line := logLine(got, "Heap Backing File:"); !strings.Contains(line, "Heap Backing File: /dev/shm/") {
			t.Errorf("heap backing: want the fallback file in /dev/shm, got %q", line)
		}
	})

	t.Run("no shared memory", func(t *testing.T) {
		res, got := run(t, false)
		t.Logf("confined, exit %d:\n%s", res.ExitCode, got)
		if line := logLine(got, "Failed to create memfd file"); !strings.HasSuffix(line, "(Function not supported)") {
			t.Errorf("memfd_create: want HotSpot's ENOSYS message, got %q", line)
		}
		if ok, _ := mountLayerAvailable(t); ok {
			// The default: the mount layer's private /dev/shm is the
			// program's own, granted read-write; the fallback works.
			if line := logLine(got, "Heap Backing File:"); res.ExitCode != 0 || !strings.Contains(line, "Heap Backing File: /dev/shm/") {
				t.Errorf("with the private /dev/shm: exit %d, heap backing %q; want the fallback file in /dev/shm", res.ExitCode, line)
			}
			return
		}
		// The fallback (O_TMPFILE, then open/unlink) meets Landlock.
		if line := logLine(got, "Failed to create file /dev/shm/"); !strings.HasSuffix(line, "(Permission denied)") {
			t.Errorf("fallback: want the file in /dev/shm refused with EACCES, got %q", line)
		}
		if res.ExitCode == 0 || strings.Contains(got, "Heap Backing File:") {
			t.Errorf("the JVM got a heap without /dev/shm (exit %d)", res.ExitCode)
		}
	})
}

// logLine returns the first line of out that contains s, or "".
func logLine(out, s string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, s) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}
