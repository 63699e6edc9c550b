package main

import (
	"maps"
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

// --env and --keep-env make Config.Env, the program's whole environment,
// the same way for run, plan and verify: PATH alone by default, the env
// of --config when it has one, each --env entry replacing its variable;
// --keep-env and an env in --config exclude each other.
func TestConfigEnvFromFlags(t *testing.T) {
	dir := t.TempDir()
	withEnv := filepath.Join(dir, "cfg.json")
	os.WriteFile(withEnv, []byte(`{"env": {"B": "from-config", "A": "config"}}`), 0o644)
	for _, c := range []struct {
		args []string
		want map[string]string
		err  string
	}{
		{nil, map[string]string{"PATH": os.Getenv("PATH")}, ""},
		{[]string{"--env", "A=b", "--env", "PATH=/x"}, map[string]string{"PATH": "/x", "A": "b"}, ""},
		{[]string{"--config", withEnv, "--env", "A=flag"}, map[string]string{"B": "from-config", "A": "flag"}, ""},
		{[]string{"--config", withEnv, "--keep-env"}, nil, "--keep-env: the --config file sets env"},
	} {
		fs := newFlagSet("plan", nil)
		var a planArgs
		a.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := a.cf.config()
		if err == nil {
			err = a.pf.configEnv(&cfg)
		}
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.args, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.err == "" && !maps.Equal(cfg.Env, c.want):
			t.Errorf("%q: env %v, want %v", c.args, cfg.Env, c.want)
		}
	}
	if _, stderr, code := runInProcess("plan", "--entry", "applyself", "--env", "A=b"); code != exitUsage || !strings.Contains(stderr, "ApplySelf cannot replace the environment") {
		t.Errorf("plan --entry applyself --env: exit %d, %q", code, stderr)
	}
}
