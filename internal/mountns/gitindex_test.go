package mountns

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// GitlinkPaths on index files written by real git: every index version,
// an entry with extended flags (git add -N), a split index, a SHA-256
// repository, and truncations of each, which must fail, never panic.
func TestGitlinkPathsRealGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed (Debian package git): the index files are git's own")
	}
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(gitBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, c := range []struct {
		name    string
		format  string
		version string
		split   bool
	}{
		{"v2", "sha1", "2", false}, {"v3", "sha1", "3", false}, {"v4", "sha1", "4", false},
		{"split", "sha1", "2", true}, {"sha256-v4", "sha256", "4", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			run(ws, "init", "-q", "--object-format="+c.format)
			for _, f := range []string{"a.txt", "dir/b.txt", "dir/deeper/c.txt", "zzz.txt"} {
				os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755)
				os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644)
			}
			run(ws, "add", "a.txt", "dir", "zzz.txt")
			run(ws, "commit", "-q", "-m", "one")
			// Two embedded repositories added as gitlinks, one nested.
			for _, sub := range []string{"lib", "dir/vendored"} {
				d := filepath.Join(ws, sub)
				os.MkdirAll(d, 0o755)
				run(d, "init", "-q", "--object-format="+c.format)
				run(d, "commit", "-q", "--allow-empty", "-m", "sub")
				run(ws, "add", sub)
			}
			if c.version != "2" || c.split {
				os.WriteFile(filepath.Join(ws, "new.txt"), nil, 0o644)
				run(ws, "add", "-N", "new.txt") // intent to add: an extended flag
			}
			run(ws, "update-index", "--index-version", c.version)
			if c.split {
				run(ws, "update-index", "--split-index")
				os.WriteFile(filepath.Join(ws, "later.txt"), nil, 0o644)
				run(ws, "add", "later.txt")
			}
			hashLen := map[string]int{"sha1": 20, "sha256": 32}[c.format]
			index, err := os.ReadFile(filepath.Join(ws, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			paths, shared, err := GitlinkPaths(index, hashLen)
			if err != nil {
				t.Fatal(err)
			}
			if c.split {
				if shared == "" {
					t.Fatal("a split index without its shared index named")
				}
				b, err := os.ReadFile(filepath.Join(ws, ".git", shared))
				if err != nil {
					t.Fatalf("the shared index named: %v", err)
				}
				more, _, err := GitlinkPaths(b, hashLen)
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, more...)
			} else if shared != "" {
				t.Errorf("shared index %q in an index that is not split", shared)
			}
			slices.Sort(paths)
			if want := []string{"dir/vendored", "lib"}; !slices.Equal(slices.Compact(paths), want) {
				t.Errorf("gitlinks %q, want %q", paths, want)
			}
			// Cut anywhere, the checksum no longer matches (unless what
			// ends up in its place is all zeros: index.skipHash's "none").
			for n := range len(index) {
				cut := index[:n]
				if n >= hashLen && slices.Equal(cut[n-hashLen:], make([]byte, hashLen)) {
					continue
				}
				if _, _, err := GitlinkPaths(cut, hashLen); err == nil {
					t.Errorf("the index cut to %d of %d bytes was accepted", n, len(index))
					break
				}
			}
			// One byte of a path changed: the checksum catches it.
			bad := slices.Clone(index)
			bad[len(bad)/2] ^= 1
			if _, _, err := GitlinkPaths(bad, hashLen); err == nil {
				t.Error("a changed byte was accepted")
			}
		})
	}
}

func TestGitlinkPathsRejects(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("DIRC"), append([]byte("DIRX\x00\x00\x00\x02\x00\x00\x00\x00"), make([]byte, 20)...),
		append([]byte("DIRC\x00\x00\x00\x05\x00\x00\x00\x00"), make([]byte, 20)...),
		append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"), make([]byte, 20)...)} {
		if _, _, err := GitlinkPaths(b, 20); err == nil {
			t.Errorf("accepted %q", b)
		}
	}
	if p, _, err := GitlinkPaths(append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"), make([]byte, 20)...), 20); err != nil || p != nil {
		t.Errorf("an empty index: %v, %v", p, err)
	}
}
