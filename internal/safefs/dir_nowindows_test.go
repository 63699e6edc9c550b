//go:build !windows

package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// tree makes a directory with a file, a subdirectory, a victim directory
// outside it, and links into the victim, a FIFO and a link to /dev/zero.
func tree(t *testing.T) (root, victim string) {
	t.Helper()
	base := t.TempDir()
	root, victim = filepath.Join(base, "root"), filepath.Join(base, "victim")
	for _, d := range []string{root, victim, filepath.Join(root, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "file"), "hello")
	write(filepath.Join(root, "sub", "inner"), "inner")
	write(filepath.Join(victim, "secret"), "secret")
	for name, target := range map[string]string{"linkdir": victim, "linkfile": filepath.Join(victim, "secret"), "zero": "/dev/zero", "self": "."} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, victim
}

func pin(t *testing.T, p string) *Dir {
	t.Helper()
	d, err := Pin(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestReadFileRefuses(t *testing.T) {
	root, _ := tree(t)
	d := pin(t, root)
	if b, err := d.ReadFile("sub/inner", 100); err != nil || string(b) != "inner" {
		t.Fatalf("ReadFile(sub/inner) = %q, %v", b, err)
	}
	for rel, want := range map[string]error{
		"linkfile":         ErrSymlink,
		"linkdir/secret":   ErrSymlink,
		"self/file":        ErrSymlink,
		"zero":             ErrSymlink,
		"fifo":             ErrSpecial,
		"sub":              ErrSpecial,
		"file/x":           ErrSpecial,
		"../victim/secret": ErrPath,
		"/etc/hostname":    ErrPath,
		"file":             ErrTooLarge, // bound 3, 5 bytes
	} {
		var b []byte
		var err error
		within(t, 5*time.Second, "ReadFile("+rel+")", func() { b, err = d.ReadFile(rel, 3) })
		if !errors.Is(err, want) {
			t.Errorf("ReadFile(%s) = %q, %v; want %v", rel, b, err, want)
		}
	}
}

func TestLstatAndOpenDir(t *testing.T) {
	root, _ := tree(t)
	d := pin(t, root)
	for rel, want := range map[string]fs.FileMode{"file": 0, "sub": fs.ModeDir, "linkdir": fs.ModeSymlink, "fifo": fs.ModeNamedPipe} {
		fi, err := d.Lstat(rel)
		if err != nil || fi.Mode.Type() != want {
			t.Errorf("Lstat(%s) = %v, %v; want type %v", rel, fi.Mode, err, want)
		}
	}
	if _, err := d.Lstat("linkdir/secret"); !errors.Is(err, ErrSymlink) {
		t.Errorf("Lstat through a link: %v, want ErrSymlink", err)
	}
	if _, err := d.OpenDir("linkdir"); !errors.Is(err, ErrSymlink) {
		t.Errorf("OpenDir(linkdir): %v, want ErrSymlink", err)
	}
	within(t, 5*time.Second, "OpenDir(fifo)", func() {
		if _, err := d.OpenDir("fifo"); !errors.Is(err, ErrSpecial) {
			t.Errorf("OpenDir(fifo): %v, want ErrSpecial", err)
		}
	})
	sub, err := d.OpenDir("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if b, err := sub.ReadFile("inner", 10); err != nil || string(b) != "inner" {
		t.Errorf("sub.ReadFile(inner) = %q, %v", b, err)
	}
	if _, err := Pin(filepath.Join(root, "linkdir")); !errors.Is(err, ErrSymlink) {
		t.Errorf("Pin of a link: %v, want ErrSymlink", err)
	}
}

func TestReadDirBudget(t *testing.T) {
	root, _ := tree(t)
	d := pin(t, root)
	ents, err := d.ReadDir("", 100)
	if err != nil || len(ents) != 7 {
		t.Fatalf("ReadDir = %v, %v; want 7 entries", ents, err)
	}
	if _, err := d.ReadDir(".", 6); !errors.Is(err, ErrBudget) {
		t.Errorf("ReadDir with a budget of 6 for 7: %v, want ErrBudget", err)
	}
	if _, err := d.ReadDir("linkdir", 100); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadDir(linkdir): %v, want ErrSymlink", err)
	}
}

// TestRemoveAllNeverFollows removes a tree holding links to a victim
// directory and file, unreadable directories, and a FIFO: the tree goes,
// the victim stays whole.
func TestRemoveAllNeverFollows(t *testing.T) {
	root, victim := tree(t)
	deep := filepath.Join(root, "sub", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(deep, "v")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(root, "sub", "a"), 0o100) // searchable only
	os.Chmod(filepath.Join(root, "sub"), 0o500)      // not writable
	d := pin(t, filepath.Dir(root))
	within(t, 10*time.Second, "RemoveAll", func() {
		if err := d.RemoveAll("root"); err != nil {
			t.Errorf("RemoveAll: %v", err)
		}
	})
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("root still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(victim, "secret")); err != nil || string(b) != "secret" {
		t.Errorf("victim changed: %q, %v", b, err)
	}
	if err := d.RemoveAll("root"); err != nil {
		t.Errorf("RemoveAll of what is gone: %v", err)
	}
}

func TestRemove(t *testing.T) {
	root, victim := tree(t)
	d := pin(t, root)
	for _, rel := range []string{"linkdir", "fifo", "zero", "file"} {
		if err := d.Remove(rel); err != nil {
			t.Errorf("Remove(%s): %v", rel, err)
		}
	}
	if err := d.Remove("linkdir/secret"); !errors.Is(err, ErrSymlink) && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove through a removed link: %v", err)
	}
	if err := d.Remove("sub"); err == nil {
		t.Errorf("Remove of a non-empty directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(victim, "secret")); err != nil {
		t.Errorf("victim gone: %v", err)
	}
}

func TestReadFileNoFollow(t *testing.T) {
	root, _ := tree(t)
	if b, err := ReadFileNoFollow(filepath.Join(root, "file"), 10); err != nil || string(b) != "hello" {
		t.Errorf("regular file: %q, %v", b, err)
	}
	for name, want := range map[string]error{"linkfile": ErrSymlink, "zero": ErrSymlink, "fifo": ErrSpecial, "sub": ErrSpecial, "file": ErrTooLarge} {
		var err error
		within(t, 5*time.Second, "ReadFileNoFollow("+name+")", func() { _, err = ReadFileNoFollow(filepath.Join(root, name), 3) })
		if !errors.Is(err, want) {
			t.Errorf("ReadFileNoFollow(%s): %v, want %v", name, err, want)
		}
	}
	if _, err := ReadFileNoFollow("/dev/null", 3); !errors.Is(err, ErrSpecial) {
		t.Errorf("a device: %v, want ErrSpecial", err)
	}
}

func TestClosedDir(t *testing.T) {
	d, err := Pin(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := d.ReadFile("x", 1); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("ReadFile on a closed Dir: %v", err)
	}
}

func TestReadRegularFile(t *testing.T) {
	root, _ := tree(t)
	if b, err := ReadRegularFile(filepath.Join(root, "linkfile"), 10); err != nil || string(b) != "secret" {
		t.Errorf("a link to a regular file is followed: %q, %v", b, err)
	}
	for name, want := range map[string]error{"zero": ErrSpecial, "fifo": ErrSpecial, "linkdir": ErrSpecial, "file": ErrTooLarge} {
		var err error
		within(t, 5*time.Second, "ReadRegularFile("+name+")", func() { _, err = ReadRegularFile(filepath.Join(root, name), 3) })
		if !errors.Is(err, want) {
			t.Errorf("ReadRegularFile(%s): %v, want %v", name, err, want)
		}
	}
}

func TestReadlink(t *testing.T) {
	root, victim := tree(t)
	d := pin(t, root)
	if got, err := d.Readlink("linkdir"); err != nil || got != victim {
		t.Errorf("Readlink(linkdir) = %q, %v; want %q", got, err, victim)
	}
	if _, err := d.Readlink("linkdir/secret"); !errors.Is(err, ErrSymlink) {
		t.Errorf("Readlink through a link: %v, want ErrSymlink", err)
	}
}

// TestDroppedDirIsClosed pins directories and drops them unclosed: the
// garbage collector must close their descriptors (a command whose caller
// never finishes it must not hold them forever).
func TestDroppedDirIsClosed(t *testing.T) {
	count := func() int {
		ents, err := os.ReadDir("/dev/fd")
		if err != nil {
			t.Skipf("cannot count descriptors: %v", err)
		}
		return len(ents)
	}
	dir := t.TempDir()
	before := count()
	for range 50 {
		if _, err := Pin(dir); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n < before+50 {
		t.Fatalf("%d descriptors after pinning 50, %d before: cannot observe the cleanup", n, before)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() > before+5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open, %d before pinning 50 dropped Dirs: not closed", count(), before)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
