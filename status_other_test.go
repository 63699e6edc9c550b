//go:build !windows

package sandbox_test

import (
	"testing"
	"time"
)

// readerPause: see status_windows_test.go. Elsewhere the reader never pauses.
func readerPause(*testing.T) time.Duration { return 0 }
