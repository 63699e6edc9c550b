package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// TestExplainRules: the hint rules, as data (docs/cli.md's "Hints").
func TestExplainRules(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the rules name Unix paths")
	}
	home := t.TempDir()
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("k"), 0o600)
	os.WriteFile(filepath.Join(ws, "a.out"), []byte{}, 0o755)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "data.txt"), []byte("x"), 0o644)
	ws, _ = filepath.EvalSymlinks(ws)
	other, _ = filepath.EvalSymlinks(other)

	base := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true}
	withExecRW, noGit, withChown := base, base, base
	withExecRW.AllowExecWritePaths, noGit.NoGitProtection, withChown.AllowChown = true, true, true
	cases := []struct {
		name   string
		cfg    sandbox.Config
		res    sandbox.RunResult
		want   string // substring of the only hint; "" for no hint
		refuse []string
	}{
		{name: "read of an existing file outside", cfg: base,
			res:  sandbox.RunResult{ExitCode: 1, Stderr: []byte("cat: " + other + "/data.txt: Permission denied\n")},
			want: "--ro " + other + "/data.txt"},
		{name: "denial on stdout with exit 0", cfg: base,
			res:  sandbox.RunResult{ExitCode: 0, Stdout: []byte("warning: open " + other + "/data.txt: permission denied\n")},
			want: "--ro " + other + "/data.txt"},
		{name: "gcc in /tmp gets TMPDIR, never --rw /tmp", cfg: base,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("/usr/bin/ld: cannot open output file /tmp/ccAbc.o: Permission denied\n")},
			want:   "$TMPDIR",
			refuse: []string{"--rw /tmp"}},
		{name: "a key is never suggested", cfg: base,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("cat: " + home + "/.ssh/id_ed25519: Permission denied\n")},
			refuse: []string{"--ro", ".ssh"}},
		{name: "home itself is never suggested", cfg: base,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("touch: cannot touch '" + home + "/new': Permission denied\n")},
			want:   "a write outside the write paths was denied",
			refuse: []string{"--rw " + home}},
		{name: "a path that does not exist is not suggested", cfg: base,
			res:    sandbox.RunResult{ExitCode: 2, Stderr: []byte("Can't locate JSON/PP.pm: /PP.pm: Permission denied\n")},
			refuse: []string{"/PP.pm"}},
		{name: "an already granted path is not suggested", cfg: base,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("cat: /usr/lib/os-release: Permission denied\n")},
			refuse: []string{"--ro /usr/lib"}},
		{name: "a socket denial is not a file hint", cfg: base,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("curl: (7) Failed to connect to example.com:443: Permission denied\n")},
			want:   "--connect example.com:443",
			refuse: []string{"--ro", "--rw"}},
		{name: "bind", cfg: base,
			res:  sandbox.RunResult{ExitCode: 1, Stderr: []byte("Error: listen EACCES: permission denied 0.0.0.0:8080\n")},
			want: "--bind 8080"},
		{name: "spawn already granted", cfg: base,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("sh: fork: Operation not permitted\n")},
			want:   "although --allow-spawn is given",
			refuse: []string{"--allow-spawn grants"}},
		{name: "spawn not granted", cfg: sandbox.Config{AllowedExecPaths: []string{"/bin"}},
			res:  sandbox.RunResult{ExitCode: 1, Stderr: []byte("sh: fork: Operation not permitted\n")},
			want: "--allow-spawn grants it"},
		{name: "a program built in the workspace", cfg: base,
			res:  sandbox.RunResult{ExitCode: 126, Stderr: []byte("sh: 1: " + ws + "/a.out: Permission denied\n")},
			want: "--allow-exec-rw"},
		{name: "/dev/shm", cfg: base,
			res:  sandbox.RunResult{ExitCode: 1, Stderr: []byte("PermissionError: [Errno 13] Permission denied: '/dev/shm/sem.xyz'\n")},
			want: "--allow-shm"},
		{name: "exec below the program with --allow-exec-rw given", cfg: withExecRW,
			res:    sandbox.RunResult{ExitCode: 2, Stderr: []byte("make: ./a.out: Permission denied\n")},
			refuse: []string{"--allow-exec-rw"}},
		{name: "a native extension with --allow-exec-rw given", cfg: withExecRW,
			res:    sandbox.RunResult{ExitCode: 1, Stderr: []byte("OSError: ./e.so: failed to map segment from shared object\n")},
			refuse: []string{"--allow-exec-rw"}},
		{name: "git without protection: not a protected path", cfg: noGit,
			res:    sandbox.RunResult{ExitCode: 255, Stderr: []byte("error: could not write config file .git/config: Device or resource busy\n")},
			refuse: []string{"protected"}},
		{name: "chown by path with --allow-chown given", cfg: withChown,
			res:  sandbox.RunResult{ExitCode: 1, Stderr: []byte("chown: changing ownership of 'f': Operation not permitted\n")},
			want: "CAP_CHOWN", refuse: []string{"--allow-chown grants"}},
		{name: "make reading a makefile outside is a read, not an exec", cfg: base,
			res:  sandbox.RunResult{ExitCode: 2, Stderr: []byte("make: " + other + "/data.txt: Permission denied\n")},
			want: "--ro " + other + "/data.txt", refuse: []string{"--exec", "--allow-exec-rw"}},
		{name: "no denial, no hint", cfg: base,
			res: sandbox.RunResult{ExitCode: 1, Stderr: []byte("error: no such file\n")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hints := explain(c.res, nil, hintContext{cfg: c.cfg, home: home, cwd: ws})
			all := strings.Join(hints, "\n")
			switch {
			case c.want == "" && len(hints) > 0 && len(c.refuse) == 0:
				t.Errorf("hints %q, want none", hints)
			case c.want != "" && (len(hints) != 1 || !strings.Contains(all, c.want)):
				t.Errorf("hints %q, want one containing %q", hints, c.want)
			}
			for _, r := range c.refuse {
				if strings.Contains(all, r) {
					t.Errorf("hints %q suggest %q", hints, r)
				}
			}
		})
	}
}
