package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --request is the whole request: a flag that would change it, or a
// command after --, is refused with it; --explain and --tty go with it
// (issue 31, item 3).
func TestRunRequestRefusesFlags(t *testing.T) {
	req := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(req, []byte(`{"config": {}, "command": ["true"]}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rw", "/tmp"}, "--rw would change it"},
		{[]string{"--env", "A=b"}, "--env would change it"},
		{[]string{"--timeout", "5s"}, "--timeout would change it"},
		{[]string{"--config", req}, "--config would change it"},
		{[]string{"--", "ls"}, `the command is its "command"`},
	} {
		_, stderr, code := runInProcess(append([]string{"run", "--request", req}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("run --request %q: exit %d, %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"config": {"allowed_read_path": []}, "command": ["true"]}`, `unknown field "allowed_read_path"`},
		{`{"config": {}, "command": []}`, "command: want the program"},
		{`{"config": {}, "command": ["true"], "timeout": 5}`, "timeout: want a duration string"},
		{`{"config": {}, "command": ["true"], "dir": "relative"}`, `dir "relative": want an absolute path`},
	} {
		os.WriteFile(req, []byte(c.body), 0o644)
		_, stderr, code := runInProcess("run", "--request", req)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("request %s: exit %d, %q; want %d and %q", c.body, code, stderr, exitUsage, c.want)
		}
	}
}
