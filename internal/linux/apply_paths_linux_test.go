//go:build linux

package linux

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// TestSelfPolicyMatchesBuilt: ApplySelf's policy, with the default paths
// looked at through the descriptors their rules are made with
// (selfPolicy), is the policy buildLinuxPolicy makes with a stat of each
// path, field for field, on Configs whose grants meet the default paths
// (the same path, a path under another name, a file inside a default
// directory), and every descriptor kept is of the file its path names.
func TestSelfPolicyMatchesBuilt(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	procSelf := "/proc/" + strconv.Itoa(os.Getpid())
	configs := map[string]Config{
		"default":     {},
		"write":       {AllowedWritePaths: []string{ws}},
		"read system": {AllowedReadPaths: []string{"/usr/lib", "/lib", "/etc/hosts", "/usr/share/zoneinfo", file}},
		"write system": {AllowedWritePaths: []string{"/dev/null", ws}, AllowedReadPaths: []string{"/usr/share"},
			AllowUnixSockets: true},
		"exec":      {AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true},
		"exec file": {AllowedExecPaths: []string{"/bin/true"}, AllowedReadPaths: []string{"/lib64"}},
		"exec writes": {AllowedWritePaths: []string{ws}, AllowExecWritePaths: true, AllowSharedMemory: true,
			AllowedTCPConnect: []string{"127.0.0.1:80"}, AllowUDP: true},
	}
	// The kernel matrix's guests are minimal: a path absent there is left
	// out of the Config (Resolve refuses it), the rest still compared.
	present := func(paths []string) []string {
		return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
			if _, err := os.Stat(p); err != nil {
				t.Logf("%s left out: %v", p, err)
				return true
			}
			return false
		})
	}
	for name, cfg := range configs {
		cfg.AllowedReadPaths, cfg.AllowedWritePaths = present(cfg.AllowedReadPaths), present(cfg.AllowedWritePaths)
		cfg.AllowedExecPaths = present(cfg.AllowedExecPaths)
		configs[name] = cfg
	}
	for _, abi := range []int{1, 3, 7, kernel().abi} {
		for name, cfg := range configs {
			rc := testResolved(t, cfg)
			want := buildLinuxPolicy(rc, abi, procSelf, nil).forSelf()
			got, opened := selfPolicy(rc, abi, procSelf)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ABI %d, %s:\nselfPolicy       %+v\nbuildLinuxPolicy %+v", abi, name, got, want)
			}
			if len(opened.fds) == 0 {
				t.Errorf("ABI %d, %s: no default path was opened", abi, name)
			}
			for path, h := range opened.fds {
				var byFD, byPath syscall.Stat_t
				if err := syscall.Fstat(h.fd, &byFD); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Stat(path, &byPath); err != nil {
					t.Fatal(err)
				}
				if byFD.Dev != byPath.Dev || byFD.Ino != byPath.Ino {
					t.Errorf("%s: the descriptor kept is not of the file the path names", path)
				}
			}
			opened.close()
			if len(opened.fds) != 0 {
				t.Errorf("close left %d descriptors", len(opened.fds))
			}
		}
	}
}
