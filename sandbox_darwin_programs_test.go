//go:build darwin

package sandbox_test

// Real programs under the generated profile on a Mac (issue 21): a "#!/bin/sh"
// script, sh -c, a write to /dev/stderr, Perl with a locale, a Go HTTPS GET
// through a local TLS server, a hard link out of a read path, proc_pidpath(1),
// an exec-listed FIFO, and Run's private temporary directory. These compile
// everywhere (GOOS=darwin go vet) but run only on macOS; the profile was
// written for macOS 13 to 26 and these tests have not been run on one by
// their authors.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// procPidpath1 is proc_pidpath(1) through proc_info(2).
func procPidpath1() (string, error) {
	p, errno := rawsys.ProcPidpath(1)
	if errno != 0 {
		return "", errno
	}
	return p, nil
}

// darwinProgramHelper runs the helper modes of this file inside the
// sandbox; false for a mode it does not know.
func darwinProgramHelper(t *testing.T, mode, arg string) bool {
	switch mode {
	case "procinfo":
		if p, err := procPidpath1(); !errors.Is(err, syscall.EPERM) {
			t.Fatalf("proc_pidpath(1) = %q, %v; want EPERM", p, err)
		}
	case "https":
		// arg: "URL CAFILE"
		url, caFile, _ := strings.Cut(arg, " ")
		pemBytes, err := os.ReadFile(caFile)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			t.Fatal("no certificate in " + caFile)
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		resp, err := c.Get(url)
		if err != nil {
			t.Fatalf("HTTPS GET %s: %v", url, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "hello over tls" {
			t.Fatalf("body %q", body)
		}
	default:
		return false
	}
	return true
}

// runWrapped runs prog under cfg in dir with env and returns stdout, stderr.
func runWrapped(t *testing.T, cfg sandbox.Config, dir string, env []string, prog string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = dir, env
	wrap(t, cmd, cfg)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func TestDarwinShebangScript(t *testing.T) {
	requireSandboxExec(t)
	ws, tools := realTempDir(t), realTempDir(t)
	script := filepath.Join(tools, "hello.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"hello $1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Only the script is named: WrapCommand grants /bin/sh as its
	// interpreter, and the shim's shells with it. The script is outside
	// the write path (one inside it is refused: the program could
	// rewrite it).
	out, errOut, err := runWrapped(t, sandbox.Config{AllowedWritePaths: []string{ws}}, ws, nil, script, "world")
	if err != nil || out != "hello world\n" {
		t.Errorf("#!/bin/sh script: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

func TestDarwinShDashC(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	out, errOut, err := runWrapped(t, cfg, ws, nil, "/bin/sh", "-c", "echo out; echo err > /dev/stderr; echo fd >&2; cd . && pwd")
	if err != nil || out != "out\n"+ws+"\n" || errOut != "err\nfd\n" {
		t.Errorf("sh -c: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

func TestDarwinPerlLocale(t *testing.T) {
	requireSandboxExec(t)
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		t.Skipf("no /usr/bin/perl on this Mac: %v", err)
	}
	ws := realTempDir(t)
	env := []string{"LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8"}
	prog := `use POSIX qw(setlocale LC_ALL); defined(setlocale(LC_ALL, "en_US.UTF-8")) or die "no locale\n"; print "ok\n";`
	out, errOut, err := runWrapped(t, sandbox.Config{AllowedWritePaths: []string{ws}}, ws, env, "/usr/bin/perl", "-e", prog)
	if err != nil || out != "ok\n" || strings.Contains(errOut, "locale") {
		t.Errorf("perl with a locale: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

func TestDarwinHTTPSLocal(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over tls")
	}))
	defer srv.Close()
	caFile := filepath.Join(ws, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedTCPConnect: []string{"127.0.0.1:" + strconv.Itoa(port)}}
	if out, err := runHelper(t, cfg, ws, "https", srv.URL+" "+caFile); err != nil {
		t.Errorf("HTTPS GET through a local TLS server: %v\n%s", err, out)
	}
}

func TestDarwinHardLinkOutOfReadPath(t *testing.T) {
	requireSandboxExec(t)
	ws, data := realTempDir(t), realTempDir(t)
	src := filepath.Join(data, "f")
	if err := os.WriteFile(src, []byte("read-only data"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(ws, "x")
	// The control: unwrapped, the link works (same volume).
	if err := os.Link(src, filepath.Join(ws, "control")); err != nil {
		t.Skipf("ln across these directories fails unwrapped too: %v", err)
	}
	// From a read path, and from a directory not granted at all (the
	// user's other files on the same volume).
	for _, cfg := range []sandbox.Config{
		{AllowedWritePaths: []string{ws}, AllowedReadPaths: []string{data}},
		{AllowedWritePaths: []string{ws}},
	} {
		_, errOut, err := runWrapped(t, cfg, ws, nil, "/bin/ln", src, dst)
		if err == nil || !strings.Contains(errOut, "Operation not permitted") {
			t.Errorf("ln %s WS/x (read paths %q): %v, stderr %q; want EPERM (a hard link would make that file writable)", src, cfg.AllowedReadPaths, err, errOut)
		}
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the link was made: %v", err)
		}
	}
}

func TestDarwinProcPidpath(t *testing.T) {
	requireSandboxExec(t)
	if p, err := procPidpath1(); err != nil {
		t.Skipf("proc_pidpath(1) fails unwrapped too (%v): the test proves nothing", err)
	} else {
		t.Logf("unwrapped: proc_pidpath(1) = %s", p)
	}
	ws := realTempDir(t)
	if out, err := runHelper(t, sandbox.Config{AllowedWritePaths: []string{ws}}, ws, "procinfo", ""); err != nil {
		t.Errorf("helper: %v\n%s", err, out)
	}
}

func TestDarwinWrapFIFOOnExecList(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	fifo := filepath.Join(ws, "fifo")
	if err := unix.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		cmd := exec.Command("/usr/bin/true")
		done <- sandbox.New().WrapCommand(cmd, sandbox.Config{AllowedExecPaths: []string{fifo}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WrapCommand with a FIFO on the exec list: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WrapCommand hangs on an exec-listed FIFO")
	}
}

// Run gives the program one private directory, removed afterwards: TMPDIR
// is its tmp, HOME its home (when the caller sets no HOME), and
// GIT_CONFIG_GLOBAL a file in TMPDIR. Only shell builtins run: no fork is
// granted.
func TestDarwinRunPrivateTemp(t *testing.T) {
	requireSandboxExec(t)
	res, err := sandbox.Run(context.Background(), sandbox.Config{}, "/bin/sh",
		[]string{"-c", `echo x > "$TMPDIR/f" && read l < "$TMPDIR/f" && echo "$l" && echo y > "$HOME/g" && ` +
			`test "$HOME" = "${TMPDIR%/tmp}/home" && test "$GIT_CONFIG_GLOBAL" = "$TMPDIR/.gitconfig" && test "$GIT_CONFIG_NOSYSTEM" = 1 && ` +
			`echo "${TMPDIR%/tmp}"`}, sandbox.RunOptions{Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 2 || lines[0] != "x" {
		t.Fatalf("stdout %q: want x, then the run's directory (HOME and TMPDIR side by side in it)", res.Stdout)
	}
	if _, err := os.Stat(lines[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private directory %s outlived Run: %v", lines[1], err)
	}
	if _, err := os.Stat("/Library/Developer/CommandLineTools/usr/bin/git"); err != nil {
		t.Logf("no Command Line Tools git: the git part is skipped (%v)", err)
		return
	}
	// git init writes .git/config: only without git protection.
	ws := realTempDir(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, NoGitProtection: true}
	res, err = sandbox.Run(context.Background(), cfg, "/usr/bin/git", []string{"init", "-q", ws}, sandbox.RunOptions{Dir: ws, Timeout: 60 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Errorf("git init through the xcrun shim: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
}
