package sandbox

// The status file: how an Agent hands its canary result to its Engine.
//
// What a result proves. The canary proves what the process that ran it
// could not do at the moment it ran: its probes were denied with the errno
// only the sandbox gives. It proves nothing about a process that did not
// run it, nor about later moments. The status file is the Agent's own
// account of that run (self-attestation): any program that can write the
// workspace unconfined can write "verified" there, and nothing in the file
// can tell such a forgery from the real thing. What the Engine can check is
// that the result belongs to this run: a nonce it made and handed only to
// the Agent it started (NewCanaryNonce, CanaryNonceEnv) must come back in
// the result, and the result must be recent (ReadFreshCanaryResult). That
// stops an old result, or one left by another run, from being replayed; it
// does not stop a writer that is not confined and can learn the nonce (the
// Agent's environment is readable by processes of the same user through
// /proc/<pid>/environ). Starting the Agent with WrapCommand, so that it is
// confined before its first instruction, is what makes the result the
// confined program's.

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/openparallax/sandbox/internal/safefs"
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
//
// The workspace is the Agent's to write, so the file is read as the
// trusted side reads everything there (internal/safefs): a symbolic link
// at .openparallax or at the file is not followed, a FIFO, device or
// socket is not read (a FIFO swapped in does not make the Engine wait: it
// is opened without blocking and refused), and at most 1 MiB is read. Each
// of these is Status "unknown", saying which. On Windows a reparse point
// (symbolic link, junction) at either is refused, and the handle must be a
// plain disk file.
//
// It does not check that the result is from the run the caller started: an
// Engine uses [ReadFreshCanaryResult] for that.
func ReadCanaryResult(workspace string) CanaryResult {
	unknown := func(format string, args ...any) CanaryResult {
		return CanaryResult{Status: CanaryUnknown, Summary: fmt.Sprintf(format, args...)}
	}
	path := filepath.Join(workspace, StatusDir, StatusFile)
	data, err := readStatus(workspace)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return unknown("no canary result: %v", err)
	case errors.Is(err, safefs.ErrSymlink):
		return unknown("canary result %s is, or lies under, a symbolic link: not followed", path)
	case errors.Is(err, safefs.ErrSpecial):
		return unknown("canary result %s is not a regular file: not read (%v)", path, err)
	case errors.Is(err, safefs.ErrTooLarge):
		return unknown("canary result larger than %d bytes", maxStatusSize)
	case err != nil:
		return unknown("canary result unreadable: %v", err)
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

// CanaryNonceEnv is the environment variable through which an Engine hands
// the Agent it starts the nonce for its canary result:
//
//	nonce := sandbox.NewCanaryNonce()
//	cmd.Env = append(cmd.Environ(), sandbox.CanaryNonceEnv+"="+nonce)
//	// … WrapCommand, Start, and later:
//	r := sandbox.ReadFreshCanaryResult(workspace, nonce, time.Minute)
//
// and in the Agent:
//
//	r := sandbox.VerifyCanaryFor(cfg)
//	r.Nonce = os.Getenv(sandbox.CanaryNonceEnv)
//	err := sandbox.WriteCanaryResult(workspace, r)
const CanaryNonceEnv = "OPENPARALLAX_CANARY_NONCE"

// NewCanaryNonce returns a new random nonce: 128 bits from crypto/rand, as
// 26 base32 characters. An Engine makes one per Agent it starts.
func NewCanaryNonce() string { return rand.Text() }

// canaryClockSkew is how far in the future a result's timestamp may lie:
// Engine and Agent read the same clock, so only a clock step explains more.
const canaryClockSkew = 2 * time.Second

// ReadFreshCanaryResult reads the status file as [ReadCanaryResult] does,
// and returns Status "unknown" (not verified), with the reason in Summary,
// also when the result does not carry nonce, when it is older than maxAge,
// or when its timestamp lies in the future. An empty nonce or a maxAge that
// is not positive is refused the same way: there is nothing to check
// against. See the package's status file notes for what this does and does
// not prove.
func ReadFreshCanaryResult(workspace, nonce string, maxAge time.Duration) CanaryResult {
	return checkFresh(ReadCanaryResult(workspace), nonce, maxAge, time.Now())
}

func checkFresh(r CanaryResult, nonce string, maxAge time.Duration, now time.Time) CanaryResult {
	unknown := func(format string, args ...any) CanaryResult {
		return CanaryResult{Status: CanaryUnknown, Summary: fmt.Sprintf(format, args...)}
	}
	switch {
	case nonce == "":
		return unknown("no nonce to check the canary result against")
	case maxAge <= 0:
		return unknown("no maximum age to check the canary result against")
	case r.Status == CanaryUnknown:
		return r
	case r.Nonce == "":
		return unknown("canary result carries no nonce: not from this run (its summary: %s)", r.Summary)
	case subtle.ConstantTimeCompare([]byte(r.Nonce), []byte(nonce)) != 1:
		return unknown("canary result carries another nonce: not from this run (its summary: %s)", r.Summary)
	case r.Timestamp.After(now.Add(canaryClockSkew)):
		return unknown("canary result is dated %s, in the future", r.Timestamp.Format(time.RFC3339Nano))
	case now.Sub(r.Timestamp) > maxAge:
		return unknown("canary result is %s old, more than %s (its summary: %s)", now.Sub(r.Timestamp).Round(time.Millisecond), maxAge, r.Summary)
	}
	return r
}
