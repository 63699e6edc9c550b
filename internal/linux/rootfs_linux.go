//go:build linux

package linux

// What the sandbox's own root shows (internal/mountns's root.go), read
// from the host: every path the policy grants, resolved, and the symbolic
// links on the way to each, made again in the new root so that the paths
// the program names (/bin/sh, /lib64/ld-linux-x86-64.so.2,
// /etc/resolv.conf) lead where they lead on the host.

import (
	"io/fs"
	"os"
	"strings"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spec"
)

// rootHost is what newMountLayer is told of the spawn for the own root.
type rootHost struct {
	// pol is the spawn's policy (its rule paths are shown), nil for none.
	pol *linuxPolicy
	// given are paths the program names as given, before resolution
	// (the target's path): the links on them are made too.
	given []string
	// freshProc: the program has a PID namespace of its own, so /proc
	// is a fresh procfs of it.
	freshProc bool
}

// mergedUsr are the top-level links of a merged /usr, made in the own
// root where they are links on the host (ELF interpreters and #! lines
// name /lib64/... and /bin/sh).
var mergedUsr = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// spec is the mountns.Root for this spawn, cwd the working directory as
// given.
func (h rootHost) spec(cwd string) *mountns.Root {
	r := &mountns.Root{FreshProc: h.freshProc}
	seen := map[string]bool{}
	paths := append(append([]string{}, mergedUsr...), h.given...)
	if cwd != "" {
		// Its links only: the directory itself is shown where a grant
		// covers it, else made empty (mountns.Spec.Opaque).
		r.Links = linksOn(cwd, seen, r.Links)
	}
	for _, sp := range SystemPaths {
		paths = append(paths, sp.Path)
	}
	if h.pol != nil {
		for _, rule := range h.pol.Paths {
			paths = append(paths, rule.Path)
		}
	}
	for _, p := range paths {
		r.Links = linksOn(p, seen, r.Links)
		if res := mountns.HostResolve(p); res != "" && !seen["show "+res] {
			seen["show "+res] = true
			r.Show = append(r.Show, res)
		}
	}
	return r
}

// linksOn appends to out the symbolic links met resolving p on the host
// (spec.WalkLinks: a link's target is followed, at most 40 of them, as
// the kernel does), each once (seen).
func linksOn(p string, seen map[string]bool, out []mountns.Link) []mountns.Link {
	spec.WalkLinks(spec.OS, p, func(l string, _ fs.FileInfo, target string) bool {
		if !seen[l] {
			seen[l] = true
			out = append(out, mountns.Link{Path: l, Target: target})
		}
		return true
	})
	return out
}

// rootPivotBlocked says why pivot_root cannot leave this process's root
// ("" when it can): a root that is the initial ramfs (rootfs, as in a
// bare initramfs) cannot be pivoted away from (EINVAL), so the own root
// is refused there rather than failing at every start.
func rootPivotBlocked() string {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "the host's mounts cannot be read to check the root: " + err.Error()
	}
	if rootIsRootfs(string(mi)) {
		return "the root filesystem is the initial ramfs (rootfs), which pivot_root cannot leave"
	}
	return ""
}

// rootIsRootfs reports whether mountinfo's mount of / (the last one
// listed: the one on top) is rootfs.
func rootIsRootfs(mountinfo string) bool {
	is := false
	for _, l := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(l)
		if len(f) < 7 || f[4] != "/" {
			continue
		}
		for i := 6; i < len(f)-1; i++ {
			if f[i] == "-" {
				is = f[i+1] == "rootfs"
				break
			}
		}
	}
	return is
}
