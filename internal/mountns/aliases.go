package mountns

import (
	"path"
	"strconv"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo: which filesystem
// (major:minor), which directory of it (Root) is mounted where (Point).
type mountEntry struct {
	dev, root, point string
}

// parseMountinfo reads the fields HostAliases needs; lines it cannot read
// are skipped.
func parseMountinfo(mountinfo string) []mountEntry {
	var out []mountEntry
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent major:minor root mountpoint options ...
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		root, point := unescapeMountinfo(f[3]), unescapeMountinfo(f[4])
		if !path.IsAbs(root) || !path.IsAbs(point) {
			continue
		}
		out = append(out, mountEntry{f[2], path.Clean(root), path.Clean(point)})
	}
	return out
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space,
// \011, \012, \134) in a mountinfo path.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// HostAliases returns, for each of paths (absolute, resolved), the other
// places on the host where the same directory or file of the same
// filesystem is mounted, as mountinfo (the text of /proc/self/mountinfo)
// shows them: a bind mount of the path's subtree, or of a directory that
// holds it, elsewhere. Each Alias names the host tree (Path: the path
// itself, or the part of it that is mounted elsewhere) and where it is
// seen too (At). A path's own mount is the deepest, and of those the
// last, in mountinfo whose mount point holds it (later mounts stack on
// earlier ones); an alias is listed only where its mount is the one its
// path shows (a mount hidden under another is not reachable there). Hard
// links are not aliases and are not found.
func HostAliases(mountinfo string, paths []string) []Alias {
	entries := parseMountinfo(mountinfo)
	var out []Alias
	add := func(a Alias) {
		for _, o := range out {
			if o == a {
				return
			}
		}
		out = append(out, a)
	}
	for _, p := range paths {
		own := ownEntry(entries, p)
		if own < 0 {
			continue
		}
		e := entries[own]
		// p as a path inside its filesystem.
		rel := path.Join(e.root, strings.TrimPrefix(p, e.point))
		for i, o := range entries {
			if i == own || o.dev != e.dev {
				continue
			}
			var a Alias
			switch {
			case under(rel, o.root):
				a = Alias{Path: p, At: path.Join(o.point, strings.TrimPrefix(rel, o.root))}
			case under(o.root, rel):
				a = Alias{Path: path.Join(p, strings.TrimPrefix(o.root, rel)), At: o.point}
			default:
				continue
			}
			// Only where that mount is what the path shows (not one
			// mounted over since, where the alias is not there at all).
			if a.At != a.Path && !under(a.At, a.Path) && !under(a.Path, a.At) && ownEntry(entries, a.At) == i {
				add(a)
			}
		}
	}
	return out
}

// ownEntry is the index of the mount that path p shows: the deepest mount
// point holding it, the last of equals; -1 if none.
func ownEntry(entries []mountEntry, p string) int {
	own := -1
	for i, e := range entries {
		if under(p, e.point) && (own < 0 || depth(e.point) >= depth(entries[own].point)) {
			own = i
		}
	}
	return own
}
