//go:build linux && (amd64 || arm64)

package spawnhelper

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// TestExecutableSealed: the helper's memfd holds exactly the image, is
// close-on-exec, and can be changed by no one, this process included.
func TestExecutableSealed(t *testing.T) {
	f, why := Executable()
	if f == nil {
		t.Skipf("the helper cannot run here (%s): WrapCommand uses the Go trampoline", why)
	}
	fd := int(f.Fd())
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	want := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if err != nil || seals&want != want {
		t.Fatalf("seals %#x, %v; want at least %#x", seals, err, want)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("not close-on-exec: %#x, %v", flags, err)
	}
	if _, err := unix.Pwrite(fd, []byte{0}, 0); err == nil {
		t.Error("write to the sealed memfd succeeded")
	}
	if err := unix.Ftruncate(fd, 0); err == nil {
		t.Error("truncating the sealed memfd succeeded")
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, 0); err == nil {
		t.Error("seals can still be changed")
	}
	// Through another open file description (/proc/self/fd reopens it).
	if w, err := unix.Open("/proc/self/fd/"+itoa(fd), unix.O_WRONLY, 0); err == nil {
		if _, err := unix.Write(w, []byte{0}); err == nil {
			t.Error("writing through a new open file description succeeded")
		}
		unix.Close(w)
	}
	got, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	if err != nil || !bytes.Equal(got, image) {
		t.Errorf("the memfd does not hold the image (%d bytes, %v)", len(got), err)
	}
}

func itoa(n int) string { return Path(n)[len("/proc/self/fd/"):] }
