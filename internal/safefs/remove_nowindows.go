//go:build !windows

package safefs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// listFd lists the directory fd (which it closes): at most maxEntries
// entries, ErrBudget past that.
func listFd(fd int, maxEntries int) ([]Entry, error) {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	if maxEntries < 0 {
		maxEntries = 0
	}
	var out []Entry
	for {
		// ReadDir(n) with n > 0 reads at most n more; asking one past
		// the bound is how the bound is seen without reading on.
		ents, err := f.ReadDir(maxEntries + 1 - len(out))
		for _, e := range ents {
			out = append(out, Entry{Name: e.Name(), Type: e.Type()})
		}
		if len(out) > maxEntries {
			return nil, fmt.Errorf("more than %d entries: %w", maxEntries, ErrBudget)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// unlinkEntry removes name in dirfd: a directory (empty) by
// AT_REMOVEDIR, anything else, a link included, by unlinkat itself.
func unlinkEntry(dirfd int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return classify(err)
	}
	flags := 0
	if uint32(st.Mode)&unix.S_IFMT == unix.S_IFDIR {
		flags = unix.AT_REMOVEDIR
	}
	return unix.Unlinkat(dirfd, name, flags)
}

// removeTree removes name in dirfd and, for a directory, what it holds
// (see Dir.RemoveAll). budget counts the entries still allowed.
func removeTree(dirfd int, name string, depth int, budget *int) error {
	if *budget <= 0 {
		return fmt.Errorf("more than %d entries: %w", maxRemoveEntries, ErrBudget)
	}
	*budget--
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(dirfd, name, 0)
	}
	if depth >= maxRemoveDepth {
		return fmt.Errorf("deeper than %d levels: %w", maxRemoveDepth, ErrBudget)
	}
	if st.Mode&0o700 != 0o700 {
		// The program may have left it unlistable or unwritable for its
		// owner; chmod never follows here (chmodNoFollow).
		if err := chmodNoFollow(dirfd, name, 0o700); err != nil {
			return fmt.Errorf("making it listable: %w", err)
		}
	}
	fd, err := unix.Openat(dirfd, name, dirFlags, 0)
	if err != nil {
		return classify(err)
	}
	err = removeChildren(fd, depth, budget)
	unix.Close(fd)
	if err != nil {
		return err
	}
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}

// removeChildren empties the directory fd, listing it in batches from its
// start each time (removing entries while one listing goes on may skip
// names).
func removeChildren(fd int, depth int, budget *int) error {
	const batch = 1024
	for {
		ents, err := listFirst(fd, batch)
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			return nil
		}
		for _, e := range ents {
			if err := removeTree(fd, e.Name, depth+1, budget); err != nil {
				return fmt.Errorf("%s: %w", e.Name, err)
			}
		}
	}
}

// listFirst returns the first n entries of the directory fd.
func listFirst(fd, n int) ([]Entry, error) {
	dup, err := unix.Openat(fd, ".", dirFlags, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	ents, err := f.ReadDir(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = Entry{Name: e.Name(), Type: e.Type()}
	}
	return out, nil
}
