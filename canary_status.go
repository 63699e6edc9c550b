package sandbox

// The status file: how an Agent hands its canary result to its Engine.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// Status file location, relative to a workspace.
const (
	StatusDir  = ".openparallax"
	StatusFile = "sandbox.status"
	// StatusFileMode is the status file's mode: readable by others, since it
	// holds no secret and a supervisor may run as another user; writable
	// only by its owner.
	StatusFileMode = 0o644
	maxStatusSize  = 1 << 20
)

// WriteCanaryResult writes r to <workspace>/.openparallax/sandbox.status
// atomically: a temporary file in the same directory, fsync, rename, fsync
// of the directory. A reader sees the old result or the new one, never part
// of one. It refuses to write through a symlink at .openparallax or at the
// final name, and creates .openparallax (mode 0700) when missing.
func WriteCanaryResult(workspace string, r CanaryResult) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("sandbox: encoding canary result: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Join(workspace, StatusDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("sandbox: status directory: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("sandbox: status directory: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("sandbox: status directory %s is not a directory (a symlink?): refusing to write", dir)
	}
	final := filepath.Join(dir, StatusFile)
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("sandbox: %s is not a regular file (a symlink?): refusing to write", final)
	}
	tmp, err := os.CreateTemp(dir, "."+StatusFile+".*")
	if err != nil {
		return fmt.Errorf("sandbox: status file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(StatusFileMode); err != nil && runtime.GOOS != "windows" {
		return fmt.Errorf("sandbox: status file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("sandbox: status file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sandbox: status file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("sandbox: status file: %w", err)
	}
	if err := replaceFile(tmp.Name(), final); err != nil {
		return fmt.Errorf("sandbox: status file: %w", err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: not every platform can fsync a directory
		d.Close()
	}
	return nil
}

// ReadCanaryResult reads the status file under workspace. When the file is
// missing, unreadable, not JSON, malformed, or inconsistent (a status or
// verified flag that its probes do not support), it returns Status "unknown"
// with the reason in Summary. It never panics.
func ReadCanaryResult(workspace string) CanaryResult {
	unknown := func(format string, args ...any) CanaryResult {
		return CanaryResult{Status: CanaryUnknown, Summary: fmt.Sprintf(format, args...)}
	}
	path := filepath.Join(workspace, StatusDir, StatusFile)
	fi, err := os.Lstat(path)
	if err != nil {
		return unknown("no canary result: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return unknown("canary result %s is not a regular file", path)
	}
	f, err := openStatus(path)
	if err != nil {
		return unknown("canary result unreadable: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStatusSize+1))
	if err != nil {
		return unknown("canary result unreadable: %v", err)
	}
	if len(data) > maxStatusSize {
		return unknown("canary result larger than %d bytes", maxStatusSize)
	}
	r, err := decodeCanaryResult(data)
	if err != nil {
		return unknown("canary result malformed: %v", err)
	}
	return r
}

func decodeCanaryResult(data []byte) (CanaryResult, error) {
	var r CanaryResult
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return CanaryResult{}, err
	}
	if dec.More() {
		return CanaryResult{}, errors.New("trailing data")
	}
	for i, p := range r.Probes {
		switch p.Status {
		case ProbeBlocked, ProbeFailed, ProbeSkipped, ProbeAllowed:
		default:
			return CanaryResult{}, fmt.Errorf("probe %d: unknown status %q", i, p.Status)
		}
		if p.Name == "" {
			return CanaryResult{}, fmt.Errorf("probe %d: no name", i)
		}
	}
	if want := rollup(r.Probes); r.Status != want {
		return CanaryResult{}, fmt.Errorf("status %q, but its probes roll up to %q", r.Status, want)
	}
	if r.Verified != (r.Status == CanarySandboxed) {
		return CanaryResult{}, fmt.Errorf("verified=%v with status %q", r.Verified, r.Status)
	}
	return r, nil
}
