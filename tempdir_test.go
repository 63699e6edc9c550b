package sandbox_test

import (
	"path/filepath"
	"testing"
)

// realTempDir is t.TempDir with symlinks resolved: the path the sandbox
// makes its rules on and reports (/tmp where TMPDIR names it through a
// link; /private/var/folders/… for macOS's /var/folders/…, the path
// Seatbelt sees).
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
