// Package childtest runs a test body in a re-executed child of the test
// binary, so that the body can apply an irreversible sandbox without
// restricting the test process itself.
//
// The same test function runs twice: in the parent, where [Run] re-executes
// the binary with -test.run selecting exactly this test and waits for it;
// and in the child, where [Run] calls the body. Code before Run runs in both.
// Values the parent must make (temporary directories, listener ports) go
// through [Share] or [Dir]: the parent computes them and hands them to the
// child in its environment, the child reads them back.
//
// The child's verdict is forwarded: a failing child fails the parent test
// with the child's output; a skipping child skips the parent test with the
// child's reason. The parent is never restricted.
//
// The package is also the one home of the other ways tests re-run
// themselves: AsNobody (Linux) runs a test again as user nobody from a
// copy of the test binary nobody can execute (SelfCopy), and TrySpawn
// (Windows) reports whether a helper child can be spawned with given
// creation flags.
//
// Modelled on go-landlock's lltest and golang.org/x/sys's
// GO_WANT_HELPER_PROCESS children.
package childtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
)

const envTest = "SANDBOX_CHILDTEST" // the exact test name the child runs

type state struct {
	env []string
	n   int
}

var states sync.Map // test name → *state

func stateFor(t testing.TB) *state {
	s, _ := states.LoadOrStore(t.Name(), &state{})
	return s.(*state)
}

// InChild reports whether this is the re-executed child running t.
func InChild(t testing.TB) bool { return os.Getenv(envTest) == t.Name() }

// Share returns compute() in the parent and the same value in the child.
// Calls must happen in the same order in parent and child (they do when the
// test function is deterministic up to Run), and in the test or subtest that
// calls Run: values shared by an enclosing test are not passed on.
func Share(t testing.TB, compute func() string) string {
	t.Helper()
	st := stateFor(t)
	st.n++
	key := fmt.Sprintf("SANDBOX_CHILDTEST_V%d", st.n)
	if InChild(t) {
		v, ok := os.LookupEnv(key)
		if !ok {
			t.Fatalf("childtest: %s not passed to child", key)
		}
		return v
	}
	v := compute()
	st.env = append(st.env, key+"="+v)
	return v
}

// Dir returns a temporary directory made by the parent (and removed by it
// after the test), shared with the child.
func Dir(t testing.TB) string {
	t.Helper()
	return Share(t, t.TempDir)
}

// Run runs body in a child process (see the package doc). In the child it
// simply calls body.
func Run(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	if InChild(t) {
		body(t)
		return
	}
	st := stateFor(t)
	defer states.Delete(t.Name())
	out, err := Exec(t.Name(), st.env)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("childtest: cannot run child: %v", err)
	}
	Forward(t, "child process", out, err)
}

// Forward passes on to t the verdict of a re-run of t (in a child
// process: by [Run], [AsNobody], in a namespace of its own), from the
// run's -test.v output and its exit error; what names the run in the
// messages. A run that failed (an exit error, or a FAIL line anywhere)
// fails t with its output. One whose own line for t says SKIP skips t
// with the run's messages, which hold the reason. One without a PASS or
// SKIP line for t fails t, as not having run it. Only t's own line is its
// verdict: a run of t that passed with some subtests skipped passes.
func Forward(t testing.TB, what string, out []byte, err error) {
	t.Helper()
	text := string(out)
	switch {
	case err != nil || strings.Contains(text, "--- FAIL"):
		t.Fatalf("%s failed (%v):\n%s", what, err, indent(text))
	case verdict(text, t.Name()) == "SKIP":
		t.Skipf("skipped in %s:\n%s", what, indent(messages(text)))
	case verdict(text, t.Name()) != "PASS":
		t.Fatalf("%s did not run the test:\n%s", what, indent(text))
	}
	if testing.Verbose() {
		t.Logf("%s output:\n%s", what, indent(text))
	}
}

// verdict is PASS, FAIL or SKIP from the line "--- V: name (...)" of a
// -test.v output (indented for a subtest), "" when there is none.
func verdict(text, name string) string {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimLeft(l, " \t")
		for _, v := range []string{"PASS", "FAIL", "SKIP"} {
			if strings.HasPrefix(l, "--- "+v+": "+name+" (") {
				return v
			}
		}
	}
	return ""
}

// messages keeps the log lines of a child's -test.v output, dropping the
// framework's own lines.
func messages(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || trimmed == "PASS" || trimmed == "FAIL" ||
			strings.HasPrefix(trimmed, "=== ") || strings.HasPrefix(trimmed, "--- ") {
			continue
		}
		keep = append(keep, trimmed)
	}
	return strings.Join(keep, "\n")
}

// Exec re-executes the test binary to run exactly the test called name, as
// the child, with extra environment, and returns its combined output.
func Exec(name string, env []string) ([]byte, error) {
	cmd := exec.Command(os.Args[0], "-test.run="+Pattern(name), "-test.v", "-test.count=1", "-test.timeout=120s")
	cmd.Env = append(append(os.Environ(), envTest+"="+name), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// Pattern is the -test.run pattern that selects exactly the test or subtest
// called name.
func Pattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
