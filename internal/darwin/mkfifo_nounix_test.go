//go:build !unix

package darwin

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
