//go:build linux || darwin

package pty

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestOpen checks a pair end to end, on Linux and on macOS: both ends are
// terminals, bytes written on one end arrive at the other, the window size
// set on the master is the terminal's, raw mode turns echo off and restore
// brings it back, and a read of the master ends when it is closed (the
// master is non-blocking, which Run relies on to stop its copy).
func TestOpen(t *testing.T) {
	master, tty, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	if !IsTerminal(tty) || !IsTerminal(master) {
		t.Fatalf("IsTerminal: tty %v, master %v", IsTerminal(tty), IsTerminal(master))
	}
	if err := SetSize(master, 33, 101); err != nil {
		t.Fatal(err)
	}
	if r, c, err := Size(tty); err != nil || r != 33 || c != 101 {
		t.Fatalf("Size = %d, %d, %v; want 33, 101", r, c, err)
	}

	readFor := func(want []byte) []byte {
		t.Helper()
		master.SetReadDeadline(time.Now().Add(5 * time.Second))
		var got []byte
		buf := make([]byte, 256)
		for !bytes.Contains(got, want) {
			n, err := master.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Fatalf("reading the master: %v (got %q, want %q)", err, got, want)
			}
		}
		return got
	}
	// The terminal's output reaches the master (OPOST turns \n into \r\n).
	if _, err := tty.Write([]byte("out\n")); err != nil {
		t.Fatal(err)
	}
	readFor([]byte("out\r\n"))

	// Typed input reaches the terminal, echoed in cooked mode.
	if _, err := master.Write([]byte("typed\n")); err != nil {
		t.Fatal(err)
	}
	readFor([]byte("typed")) // the echo
	buf := make([]byte, 64)
	n, err := tty.Read(buf)
	if err != nil || string(buf[:n]) != "typed\n" {
		t.Fatalf("tty read %q, %v", buf[:n], err)
	}

	// Raw mode: no echo; restore brings echo back.
	restore, err := MakeRaw(tty)
	if err != nil {
		t.Fatal(err)
	}
	master.Write([]byte("r"))
	if n, err := tty.Read(buf); err != nil || string(buf[:n]) != "r" {
		t.Fatalf("raw read %q, %v", buf[:n], err)
	}
	master.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := master.Read(buf); n > 0 || !os.IsTimeout(err) {
		t.Fatalf("raw mode echoed %q (%v)", buf[:n], err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	master.Write([]byte("e\n"))
	readFor([]byte("e"))

	// Close ends a read in progress.
	done := make(chan error, 1)
	master.SetReadDeadline(time.Time{})
	go func() {
		_, err := master.Read(buf)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	master.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("read after Close returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a read of the master")
	}
}
