//go:build linux

package linux

// Canary probes for the mount-namespace layer of WrapCommand and Run:
// deny_write (a write into a deny-write path fails with EROFS) and
// deny_read (a deny-read path cannot be read: EACCES), each with a
// positive control beside it (the write path, or the grant, holding it is
// still usable). A sandbox whose mount layer is missing (Landlock and
// seccomp alone: the parent could not create the namespaces, or the
// program was not started by WrapCommand or Run) lets these through, and
// the probes fail.
//
// Under the layer, everything outside the write paths is a read-only
// mount, so a write there fails with EROFS before Landlock is asked; and
// /tmp and /dev/shm are private and granted. The file_write probe then
// takes its target elsewhere and counts EROFS as a denial too, but only
// where it sees the layer (layerPresent): a mount that is read-only by
// itself on a filesystem that is not, as the layer's recursive
// mount_setattr makes /.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/spec"
	"golang.org/x/sys/unix"
)

// canaryLayer says whether this process runs under the mount layer. (It
// no longer says whether the Config asks for the layer: whether git
// protection does depends on a walk of the write paths for repositories
// at any depth, which a canary, meant to take milliseconds, should not
// make; nothing used that answer.)
func canaryLayer(rc *spec.Resolved) (present bool) {
	return layerPresent()
}

// layerPresent reports whether / is a read-only mount of a filesystem
// mounted read-write (the layer's mark; a read-only root filesystem is
// read-only in its superblock too).
func layerPresent() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mountpoint options [tags] - type source superoptions
		f := strings.Fields(line)
		if len(f) < 10 || f[4] != "/" {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		mountRO := hasOpt(f[5], "ro")
		superRW := hasOpt(f[sep+3], "rw")
		return mountRO && superRW
	}
	return false
}

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// probeDenyWrite writes into the first deny-write path that exists and
// lies in a write path (elsewhere Landlock alone denies it, which proves
// nothing of the layer): a file is opened for appending (nothing is
// written), a directory gets a new file (removed if it was made).
func probeDenyWrite(rc *spec.Resolved) []spec.ProbeResult {
	if len(rc.DenyWrite) == 0 {
		return nil
	}
	for _, p := range rc.DenyWrite {
		r, err := filepath.EvalSymlinks(p)
		if err != nil || !inWritePath(rc, r) {
			continue
		}
		fi, err := os.Stat(r)
		if err != nil {
			continue
		}
		var res spec.ProbeResult
		if fi.IsDir() {
			path, err := probe.TryCreate(r)
			res = probe.Outcome("deny_write", path, err, syscall.EROFS)
		} else {
			fd, err := unix.Open(r, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err == nil {
				unix.Close(fd)
			}
			res = probe.Outcome("deny_write", r, probe.PathErr("open", r, err), syscall.EROFS)
		}
		if res.Status == spec.ProbeFailed && strings.HasPrefix(res.Error, "not denied") {
			res.Error += " (the mount layer is not in force)"
		}
		return []spec.ProbeResult{res, writeControlBeside(rc, r)}
	}
	return []spec.ProbeResult{probe.Skipped("deny_write", "no deny-write path exists inside a write path here")}
}

// writeControlBeside creates (and removes) a file in the write path
// holding p: the write path itself must stay writable.
func writeControlBeside(rc *spec.Resolved, p string) spec.ProbeResult {
	for _, w := range rc.Write {
		if !w.IsDir || !spec.Under(p, w.Resolved) || p == w.Resolved {
			continue
		}
		path, err := probe.TryCreate(w.Resolved)
		r := spec.ProbeResult{Name: "control_deny_write", Target: path, Status: spec.ProbeAllowed}
		if err != nil {
			r.Status, r.Error = spec.ProbeFailed, "must be allowed: "+err.Error()
		}
		return r
	}
	return probe.Skipped("control_deny_write", "the deny-write path is a whole write path")
}

func inWritePath(rc *spec.Resolved, p string) bool {
	for _, w := range rc.Write {
		if spec.Under(p, w.Resolved) {
			return true
		}
	}
	return false
}

// probeDenyRead reads the first deny-read path that exists and lies in a
// grant. A hidden file (the layer's /dev/null on a nodev mount) fails to
// open with EACCES; a hidden directory is an empty tmpfs of mode 000, which
// the probe recognises by statfs and mode (its own EACCES would be
// ordinary permissions), or else lists (EACCES only counts where
// ordinary permissions allow the listing).
func probeDenyRead(rc *spec.Resolved) []spec.ProbeResult {
	if len(rc.DenyRead) == 0 {
		return nil
	}
	for _, p := range rc.DenyRead {
		if !granted(rc, p) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			continue
		}
		var res spec.ProbeResult
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			var fs unix.Statfs_t
			if unix.Statfs(p, &fs) == nil && fs.Type == unix.TMPFS_MAGIC && st.Mode&0o7777 == 0 {
				res = spec.ProbeResult{Name: "deny_read", Target: p, Status: spec.ProbeBlocked, Error: "hidden under an empty tmpfs of mode 000"}
			} else if !dacAllows(p, unix.R_OK|unix.X_OK) {
				continue
			} else {
				_, err := os.ReadDir(p)
				res = probe.Outcome("deny_read", p, err, syscall.EACCES)
			}
		} else {
			res = probe.Outcome("deny_read", p, probe.TryRead(p), syscall.EACCES)
		}
		return []spec.ProbeResult{res, readControlBeside(rc, p)}
	}
	return []spec.ProbeResult{probe.Skipped("deny_read", "no deny-read path exists inside a grant here")}
}

// readControlBeside lists the directory holding p, which a grant covers:
// what the grant gives must still work beside the hidden path.
func readControlBeside(rc *spec.Resolved, p string) spec.ProbeResult {
	dir := filepath.Dir(p)
	r := spec.ProbeResult{Name: "control_deny_read", Target: dir, Status: spec.ProbeAllowed}
	if !granted(rc, dir) {
		return probe.Skipped("control_deny_read", "the directory holding the deny-read path is not granted")
	}
	if _, err := os.ReadDir(dir); err != nil {
		r.Status, r.Error = spec.ProbeFailed, "must be allowed: "+err.Error()
	}
	return r
}
