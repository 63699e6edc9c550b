package trampoline

import "errors"

// Classic BPF and seccomp constants (linux/filter.h, linux/seccomp.h).
const (
	bpfLdWAbs    = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK      = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfRetK      = 0x06 // BPF_RET | BPF_K
	retAllow     = 0x7fff0000
	retErrno     = 0x00050000
	errnoEPERM   = 1
	offNr        = 0 // seccomp_data.nr
	offArch      = 4 // seccomp_data.arch
	auditX8664   = 0xc000003e
	auditAArch64 = 0xc00000b7
)

// DenySetsid returns a seccomp program for goarch ("amd64" or "arm64") that
// answers EPERM to setsid(2) made through the native system call entry and
// allows everything else. Run loads it after the Config's filters so that
// a process cannot leave the session Run kills on timeout. Calls through a
// foreign entry point are allowed here: the Config's filters already deny
// every one of them (and x32 calls on amd64), and the kernel applies the
// most restrictive answer of all filters.
func DenySetsid(goarch string) ([]SockFilter, error) {
	var arch, nr uint32
	switch goarch {
	case "amd64":
		arch, nr = auditX8664, 112
	case "arm64":
		arch, nr = auditAArch64, 157
	default:
		return nil, errors.New("trampoline: no setsid filter for " + goarch)
	}
	return []SockFilter{
		{Code: bpfLdWAbs, K: offArch},
		{Code: bpfJeqK, Jt: 0, Jf: 3, K: arch},
		{Code: bpfLdWAbs, K: offNr},
		{Code: bpfJeqK, Jt: 0, Jf: 1, K: nr},
		{Code: bpfRetK, K: retErrno | errnoEPERM},
		{Code: bpfRetK, K: retAllow},
	}, nil
}
