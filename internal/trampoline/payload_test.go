package trampoline

import (
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func samplePayload() *Payload {
	return &Payload{
		Path:    "/usr/bin/true",
		Env:     []string{"A=1", "EMPTY=", "NOEQUALS", "LD_PRELOAD=/x.so", ""},
		FirstFD: 5, ErrFD: 5,
		HandledFS: 0x7fff, HandledNet: 3, Scoped: 3,
		Rules: []PathRule{{Path: "/usr/lib", Dir: 9, File: 1}, {Path: "/tmp/a b", Dir: 0x1fff, Dev: 0x803, Ino: 1 << 40},
			{Path: "/etc/hosts", File: 1}},
		Ports:     []PortRule{{443, 2}, {0, 1}},
		Filters:   [][]SockFilter{{{Code: 6, K: 0x7fff0000}}, {{Code: 0x20, Jt: 1, Jf: 2, K: 4}, {Code: 6, K: 0x50001}}},
		ExecNonce: [2]uint64{0x0123456789abcdef, 0xfedcba9876543210},
		CgroupFDs: []int{6, 7},
		Rlimits:   []Rlimit{{Resource: 7, Cur: 64, Max: 128}, {Resource: 0, Cur: ^uint64(0), Max: ^uint64(0)}},
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	p := samplePayload()
	env := p.Environ()
	if !strings.HasPrefix(env[0], EnvMarker+"=2 ") {
		t.Fatalf("first entry %q", env[0])
	}
	for _, kv := range env {
		if strings.Contains(kv, "LD_PRELOAD=") || strings.IndexByte(kv, 0) >= 0 {
			t.Fatalf("the target's environment leaks into the trampoline's: %q", kv)
		}
	}
	if b := p.marshal(); len(b) != cap(b) {
		t.Errorf("marshal: %d bytes in a buffer of %d: the size is miscounted", len(b), cap(b))
	}
	got, err := FromEnviron(append([]string{"UNRELATED=1"}, env...))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, p)
	}
}

// The namespace section round-trips, and is absent without the flag.
func TestPayloadNamespaces(t *testing.T) {
	p := samplePayload()
	p.Flags = FlagNamespaces
	p.Mounts = []MountOp{
		{Kind: MountPrivate, Path: "/"},
		{Kind: MountClone, Path: "/work space", Slot: 3},
		{Kind: MountSetAttr, Path: "/", Set: 3, Clear: 8, Recursive: true},
		{Kind: MountTmpfs, Path: "/tmp", Mode: 01777, Set: 0xe},
		{Kind: MountAttach, Path: "/tmp/x/f", Slot: 3, Create: true, File: true},
		{Kind: MountMaskFile, Path: "/w/.env"},
		{Kind: MountClone, Path: "/w/link", Slot: 4, NoFollow: true},
		{Kind: MountProc, Path: "/tmp/proc", Create: true, Set: 0xf},
		{Kind: MountPivot, Path: "/tmp"},
		{Kind: MountSymlink, Path: "/bin", Target: "usr/bin"},
	}
	p.Net = NetStep{FD: 7, Port: 65535, Transparent: []uint16{1, 443, 65535}, Pool: MaxInboundPool}
	p.ParentMountNS = [2]uint64{4, 4026531841}
	if b := p.marshal(); len(b) != cap(b) {
		t.Errorf("marshal: %d bytes in a buffer of %d: the size is miscounted", len(b), cap(b))
	}
	got, err := FromEnviron(p.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, p)
	}
	plain := samplePayload()
	plain.Mounts = p.Mounts // not encoded without the flag
	got, err = FromEnviron(plain.Environ())
	if err != nil || got.Mounts != nil || !reflect.DeepEqual(got.Net, NetStep{}) {
		t.Fatalf("without FlagNamespaces: %v, mounts %v, net %+v", err, got.Mounts, got.Net)
	}
}

func TestPayloadChunks(t *testing.T) {
	p := samplePayload()
	p.Env = nil
	for i := range 5000 {
		p.Env = append(p.Env, "K"+itoa(i)+"="+strings.Repeat("v", 100))
	}
	env := p.Environ()
	if len(env) < 5 {
		t.Fatalf("a 500 KB payload in %d entries: want several chunks", len(env))
	}
	for _, kv := range env {
		if len(kv) > chunkSize+64 {
			t.Fatalf("entry of %d bytes exceeds the chunk size", len(kv))
		}
	}
	got, err := FromEnviron(env)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip of chunked payload: %v", err)
	}
	if _, err := FromEnviron(append(env[:2:2], env[3:]...)); err == nil {
		t.Fatal("a missing chunk was not detected")
	}
}

func TestPayloadRejects(t *testing.T) {
	good := samplePayload()
	for name, mutate := range map[string]func(p *Payload){
		"relative path": func(p *Payload) { p.Path = "bin/true" },
		"low FirstFD":   func(p *Payload) { p.FirstFD = 2 },
		"stray ErrFD":   func(p *Payload) { p.ErrFD = 9 },
		"NUL in env":    func(p *Payload) { p.Env = []string{"A=\x00"} },
		"empty rule":    func(p *Payload) { p.Rules = []PathRule{{Path: "", Dir: 9, File: 1}} },
		"unknown step":  func(p *Payload) { p.Flags = 1 << 2 },
		"bad mount kind": func(p *Payload) {
			p.Flags = FlagNamespaces
			p.Mounts = []MountOp{{Kind: mountKinds, Path: "/"}}
		},
		"relative mount path": func(p *Payload) {
			p.Flags = FlagNamespaces
			p.Mounts = []MountOp{{Kind: MountPrivate, Path: "tmp"}}
		},
		"symlink without target": func(p *Payload) {
			p.Flags = FlagNamespaces
			p.Mounts = []MountOp{{Kind: MountSymlink, Path: "/bin"}}
		},
		"target on a tmpfs": func(p *Payload) {
			p.Flags = FlagNamespaces
			p.Mounts = []MountOp{{Kind: MountTmpfs, Path: "/tmp", Target: "x"}}
		},
		"NUL in a link target": func(p *Payload) {
			p.Flags = FlagNamespaces
			p.Mounts = []MountOp{{Kind: MountSymlink, Path: "/bin", Target: "usr\x00bin"}}
		},
		"slot out of range": func(p *Payload) {
			p.Flags = FlagNamespaces
			p.Mounts = []MountOp{{Kind: MountClone, Path: "/", Slot: MaxMountSlots}}
		},
		"bad net fd": func(p *Payload) { p.Flags = FlagNamespaces; p.Net.FD = -2 },
		"transparent port 0": func(p *Payload) {
			p.Flags, p.Net = FlagNamespaces, NetStep{FD: 5, Transparent: []uint16{80, 0}}
		},
		"transparent without fd": func(p *Payload) {
			p.Flags, p.Net = FlagNamespaces, NetStep{FD: -1, Transparent: []uint16{80}}
		},
		"too many transparent ports": func(p *Payload) {
			p.Flags, p.Net = FlagNamespaces, NetStep{FD: 5, Transparent: make([]uint16, MaxTransparentPorts+1)}
			for i := range p.Net.Transparent {
				p.Net.Transparent[i] = uint16(i + 1)
			}
		},
		"inbound pool too large": func(p *Payload) {
			p.Flags, p.Net = FlagNamespaces, NetStep{FD: 5, Pool: MaxInboundPool + 1}
		},
		"inbound pool without fd": func(p *Payload) {
			p.Flags, p.Net = FlagNamespaces, NetStep{FD: -1, Pool: 1}
		},
		"negative cgroup fd":     func(p *Payload) { p.CgroupFDs = []int{-1} },
		"cgroup fd below first":  func(p *Payload) { p.CgroupFDs = []int{p.FirstFD - 1} },
		"cgroup fd is the ErrFD": func(p *Payload) { p.ErrFD = p.FirstFD; p.CgroupFDs = []int{p.FirstFD} },
		"too many cgroup fds": func(p *Payload) {
			p.CgroupFDs = nil
			for i := range MaxCgroupFDs + 1 {
				p.CgroupFDs = append(p.CgroupFDs, p.FirstFD+1+i)
			}
		},
	} {
		p := *good
		mutate(&p)
		if _, err := FromEnviron(p.Environ()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, env := range [][]string{nil, {EnvMarker + "=2 1"}, {EnvMarker + "=1 x"}, {EnvMarker + "=1 1", envChunk + "0=!!"}} {
		if _, err := FromEnviron(env); err == nil {
			t.Errorf("%q: accepted", env)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(samplePayload().marshal())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := unmarshal(b)
		if err != nil {
			return
		}
		if q, err := unmarshal(p.marshal()); err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("re-encoding a decoded payload: %v", err)
		}
	})
}

func TestFailureRoundTrip(t *testing.T) {
	for _, f := range []Failure{
		{Step: "execve", Errno: syscall.ENOENT, Detail: "/x"},
		{Step: "landlock_restrict_self", Errno: syscall.E2BIG},
		{Step: "trampoline", Detail: "with\x00NUL and \n newline"},
	} {
		got, err := UnmarshalFailure(f.Marshal())
		if err != nil || got != f {
			t.Errorf("%+v: got %+v, %v", f, got, err)
		}
	}
	if c := (Failure{Step: "execve", Errno: syscall.ENOENT}).ExitCode(); c != ExitNotFound {
		t.Errorf("ENOENT exit code %d", c)
	}
	if c := (Failure{Step: "execve", Errno: syscall.EACCES}).ExitCode(); c != ExitCannotEx {
		t.Errorf("EACCES exit code %d", c)
	}
	if c := (Failure{Step: "seccomp"}).ExitCode(); c != ExitSetup {
		t.Errorf("setup exit code %d", c)
	}
	if _, err := UnmarshalFailure([]byte("garbage")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestReserved(t *testing.T) {
	for kv, want := range map[string]bool{
		EnvMarker + "=2 1":                 true,
		EnvMarker + "=":                    true,
		envChunk + "0=AAAA":                true,
		envChunk + "12=":                   true,
		envChunk + "=x":                    false, // no number
		envChunk + "1x=y":                  false,
		"OPENPARALLAX_SANDBOX_PATH=/x":     false,
		EnvMarker:                          false, // not NAME=VALUE
		"PATH=" + EnvMarker + "=2 1":       false,
		EnvMarker + "_OTHER=1":             false,
		"X" + envChunk + "0=AAAA":          false,
		envChunk[:len(envChunk)-1] + "0=x": false,
	} {
		if got := Reserved(kv); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", kv, got, want)
		}
	}
}
