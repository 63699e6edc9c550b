//go:build windows

package windows

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/winjob"
)

// TestApplySelfCannotBeUndone tries, after ConfineSelf (ApplySelf's job),
// the attack a default security descriptor allowed: raise the query-only
// handle ConfineSelf keeps
// with DuplicateHandle, allow silent breakaway, lift the process limit, and
// start a process outside the job. Every step must be refused.
func TestApplySelfCannotBeUndone(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if err := ConfineSelf(spec.Config{}); err != nil {
			t.Fatal(err)
		}
		selfJobs.Lock()
		h := selfJobs.handles[0]
		selfJobs.Unlock()
		self := windows.CurrentProcess()
		const allAccess = windows.STANDARD_RIGHTS_REQUIRED | windows.SYNCHRONIZE | 0x3F // JOB_OBJECT_ALL_ACCESS
		for _, access := range []uint32{allAccess, winjob.JOB_OBJECT_SET_ATTRIBUTES} {
			var raised windows.Handle
			err := windows.DuplicateHandle(self, h, self, &raised, access, false, 0)
			if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
				continue
			}
			if err != nil {
				t.Fatalf("DuplicateHandle(job, %#x) = %v, want ERROR_ACCESS_DENIED", access, err)
			}
			// Show what the raised handle does.
			var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
			info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK
			_, serr := windows.SetInformationJobObject(raised, windows.JobObjectExtendedLimitInformation,
				uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
			outside := "not tried"
			if serr == nil {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				if err := cmd.Start(); err == nil {
					cmd.Process.WithHandle(func(p uintptr) {
						in, _ := winjob.InJob(windows.Handle(p), h)
						outside = map[bool]string{true: "in the job", false: "OUTSIDE the job"}[in]
					})
					cmd.Wait()
				}
			}
			t.Errorf("ConfineSelf's handle was raised to %#x (set silent breakaway: %v; next child: %s)", access, serr, outside)
		}
		var dac windows.Handle
		err := windows.DuplicateHandle(self, h, self, &dac, windows.WRITE_DAC, false, 0)
		switch {
		case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		case err == nil && winjob.UnderWine():
			t.Log("Wine grants the owner WRITE_DAC despite the OWNER RIGHTS entry: only Windows proves " +
				"that the DACL cannot be rewritten to raise the handle")
		default:
			t.Errorf("DuplicateHandle(job, WRITE_DAC) = %v, want ERROR_ACCESS_DENIED", err)
		}
	})
}
