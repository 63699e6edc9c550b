//go:build !windows

package sandbox

import "os"

// outputPipe returns the pipe for one of Run's output streams.
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }
