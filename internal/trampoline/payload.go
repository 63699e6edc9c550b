package trampoline

// The payload and its encoding. Pure: compiled and tested on every OS.
// Only runtime-early packages may be imported here (see the package doc).

import (
	"encoding/base64"
	"errors"
	"syscall"
	"unsafe"
)

const (
	// Arg0 is the trampoline's argv[0]. It is not a path and names what
	// the process is in ps(1) output.
	Arg0 = "openparallax-sandbox-trampoline"

	// EnvMarker is the environment variable whose presence makes a process
	// a trampoline. Its value is the payload format version and the number
	// of chunks, e.g. "1 2". The name is reserved: the sandbox package
	// removes it from every target's environment.
	EnvMarker = "OPENPARALLAX_SANDBOX_TRAMPOLINE"

	// envChunk prefixes the payload chunks' names: ..._P0, ..._P1, ...
	envChunk = "OPENPARALLAX_SANDBOX_P"

	// chunkSize bounds one environment string well below the kernel's
	// MAX_ARG_STRLEN (32 pages, 128 KiB on 4 KiB pages).
	chunkSize = 64 << 10

	version = '2'
	magic   = "SBX2"
)

// Exit statuses of a trampoline that could not start its target.
const (
	ExitSetup    = 125 // the sandbox could not be set up
	ExitCannotEx = 126 // execve failed for a reason other than ENOENT
	ExitNotFound = 127 // execve: ENOENT
)

// Payload is what the child needs to confine itself and start the target.
// The parent builds every field; the child only applies them.
type Payload struct {
	Path string   // the target, an absolute path, as execve gets it
	Env  []string // the target's complete environment

	// FirstFD is the first descriptor that is not the target's
	// (3 + len(cmd.ExtraFiles)); the child marks it and all above
	// close-on-exec. ErrFD is the failure pipe, or -1; when used it is
	// FirstFD, the last of the inherited descriptors.
	FirstFD int
	ErrFD   int

	// Landlock ruleset attributes, already limited to the kernel's ABI.
	HandledFS, HandledNet, Scoped uint64
	Rules                         []PathRule
	Ports                         []PortRule

	// Filters are seccomp programs, loaded in order.
	Filters [][]SockFilter

	// ExecNonce goes into the fourth and fifth argument registers of the
	// child's execve of the target (execve reads three): a filter built
	// with seccomp.Policy.ExecNonce accepts no other execve. Zero when the
	// filter does not check it.
	ExecNonce [2]uint64

	// Room for later steps of the child half, each done before the
	// Landlock step. CgroupFDs are inherited descriptors of cgroup.procs
	// files, one per cgroup hierarchy (cgroup v2: one; v1: one per
	// controller), each at or above FirstFD and not ErrFD: the child
	// writes "0" to each (joining the tree's cgroup) before anything else,
	// and exits without running the target if any write fails. Rlimits
	// are set with prlimit64 on the child itself, once the Landlock rules'
	// paths are opened (an OpenFiles limit may be below their number) and
	// before the seccomp filters. Flags asks for steps a child half may not
	// have (FlagNamespaces, FlagProbe: both child halves have them); a
	// child half refuses a payload with a flag it does not know (exit 125).
	CgroupFDs []int
	Flags     uint32
	Rlimits   []Rlimit

	// The namespace step, present in the encoding only when Flags has
	// FlagNamespaces (both child halves have it: the helper's ns_step in
	// internal/spawnhelper/c/helper.c does what namespaceStep does here).
	// The child was cloned into new mount and IPC
	// namespaces (and a user namespace when the caller is not root, and
	// a network namespace when Net is used); after the cgroup step and
	// before Landlock it performs Mounts in order (see [MountOp]), then the
	// network step Net. Landlock's rules are opened after the mounts, so
	// they name what the sandbox will see.
	Mounts []MountOp
	Net    NetStep
	// ParentMountNS is the device and inode of the parent's mount
	// namespace (stat of /proc/self/ns/mnt). The namespace step refuses
	// to run in that namespace: a caller that replaced cmd.SysProcAttr
	// after WrapCommand (losing CLONE_NEWNS) would otherwise, as root,
	// have the mounts made on the host.
	ParentMountNS [2]uint64
}

// Payload flags.
const (
	// FlagNamespaces: the payload has the namespace step (Mounts, Net).
	FlagNamespaces = 1 << 0
	// FlagProbe: the trampoline exits 0 right after the namespace step,
	// without confining itself or executing anything. Used once per
	// process by the parent's availability probe, which tries the
	// namespace step for real (a user namespace whose capabilities an LSM
	// withholds is only found out by a mount that fails).
	FlagProbe = 1 << 1

	knownFlags = FlagNamespaces | FlagProbe
)

// MountOp is one step of the mount layer, as internal/mountns.Build makes
// it (mountns.Op, which has the same kinds and fields): one or two mount-API
// system calls, executed by [ApplyMounts] in the child.
type MountOp struct {
	Kind      uint32 // MountPrivate, ...
	Path      string // absolute
	Slot      uint32 // the clone slot of MountClone and MountAttach
	Mode      uint32 // the tmpfs root's mode (MountTmpfs)
	Set       uint64 // MOUNT_ATTR_* to set (MountSetAttr, MountTmpfs)
	Clear     uint64 // MOUNT_ATTR_* to clear (MountSetAttr)
	Recursive bool   // MountSetAttr: the whole subtree
	Create    bool   // MountAttach, MountTmpfs, MountProc: make the mount point first (inside a tmpfs of the plan)
	File      bool   // MountAttach with Create: the mount point is a file
	NoFollow  bool   // MountClone, MountSetAttr: the symbolic link Path itself (AT_SYMLINK_NOFOLLOW)
	Target    string // MountSymlink: what the link points to (empty for every other kind)
}

// Mount step kinds (mountns.OpKind has the same values).
const (
	MountPrivate  = iota // mount(NULL, Path, NULL, MS_REC|MS_PRIVATE)
	MountClone           // slot = open_tree(Path, OPEN_TREE_CLONE|AT_RECURSIVE)
	MountSetAttr         // mount_setattr(Path, Set, Clear, AT_RECURSIVE if Recursive)
	MountTmpfs           // a new tmpfs at Path, mode Mode, flags from Set
	MountAttach          // move_mount(slot → Path)
	MountMaskFile        // /dev/null over Path, nodev and read-only: opening fails with EACCES
	MountProc            // a new procfs at Path, flags from Set (the sandbox's own root, in a PID namespace)
	MountPivot           // chdir(Path); pivot_root(".", "."); umount2(".", MNT_DETACH); chdir("/")
	MountSymlink         // symlink(Target, Path), its missing parents made first (inside the own root's tmpfs)
	mountKinds
)

// NetStep is the network part of the namespace step (filled by the egress
// layer): FD, when not -1, is an inherited descriptor through which the
// child hands the caller what the step makes; Port is the proxy's loopback
// port. Transparent, when not empty, asks for the transparent path too:
// routes that make every address local to lo, one listener per port in
// it (in that order) and the resolver's UDP socket, each handed to the
// caller after the proxy's listener (see the egress layer's handoff
// order, internal/egress's handoff_linux.go). Pool, when not 0, asks for
// that many unbound, unconnected AF_INET TCP sockets made in the
// namespace and handed over last: the inbound pool, through which a
// caller that cannot enter the namespace (not root: setns needs
// CAP_SYS_ADMIN in its own user namespace too) connects to the
// program's listeners from outside, one socket per connection. Encoded
// always with the namespace section, so the format is made once.
// Meaningful only with FlagNamespaces (the zero value otherwise).
type NetStep struct {
	FD          int
	Port        uint16
	Transparent []uint16
	Pool        uint32
}

// MaxTransparentPorts bounds NetStep.Transparent: each port is a listener
// the child makes and hands over (a descriptor in the caller for as long
// as the sandbox runs).
const MaxTransparentPorts = 256

// MaxInboundPool bounds NetStep.Pool: each is a socket the child makes
// and a descriptor the caller holds until it is used or the sandbox ends.
const MaxInboundPool = 256

// MaxMountSlots bounds MountOp.Slot: a plan clones at most this many trees
// (the C helper keeps their descriptors in a fixed array).
const MaxMountSlots = 1024

// MaxCgroupFDs bounds Payload.CgroupFDs: one per cgroup v1 hierarchy the
// sandbox uses (pids, memory, freezer, cpuacct), with room to spare.
const MaxCgroupFDs = 8

// Rlimit is one resource limit the child sets on itself.
type Rlimit struct {
	Resource uint32
	Cur, Max uint64
}

// PathRule is a landlock_path_beneath_attr made in the child: it opens
// Path (following symlinks, as they are then) and grants Dir if that is a
// directory, File if it is anything else. A path that does not exist, or
// whose rights for what it is are 0, gets no rule: less access, never more.
// A path granted as a file and replaced by a directory since WrapCommand
// thus grants nothing beneath it. When Dev or Ino is not 0 they are the
// device and inode (stat's st_dev, st_ino) of what the parent resolved, and
// a path that opens anything else (replaced, or by a symlink to elsewhere)
// gets no rule either.
type PathRule struct {
	Path      string
	Dir, File uint64
	Dev, Ino  uint64
}

// PortRule is one landlock_net_port_attr.
type PortRule struct {
	Port   uint64
	Access uint64
}

// SockFilter is struct sock_filter, one classic BPF instruction.
type SockFilter struct {
	Code uint16
	Jt   uint8
	Jf   uint8
	K    uint32
}

// Environ returns the trampoline's complete environment carrying p.
func (p *Payload) Environ() []string {
	raw := p.marshal()
	// Each chunk holds chunkSize/4*3 payload bytes: chunkSize base64
	// characters, a multiple of 4, as FromEnviron requires of every chunk
	// but the last.
	const perChunk = chunkSize / 4 * 3
	n := max(1, (len(raw)+perChunk-1)/perChunk)
	env := make([]string, 0, n+1)
	env = append(env, EnvMarker+"="+string(rune(version))+" "+itoa(n))
	for i := 0; i < n; i++ {
		part := raw[i*perChunk : min((i+1)*perChunk, len(raw))]
		name := envChunk + itoa(i) + "="
		b := make([]byte, len(name)+base64.RawStdEncoding.EncodedLen(len(part)))
		copy(b, name)
		base64.RawStdEncoding.Encode(b[len(name):], part)
		env = append(env, unsafe.String(unsafe.SliceData(b), len(b)))
	}
	return env
}

// Reserved reports whether kv (NAME=VALUE) is one of the child half's own
// variables: EnvMarker, or a payload chunk (OPENPARALLAX_SANDBOX_P0, ...).
// The sandbox package keeps them out of every target's environment: a
// chunk copied from an earlier wrapped command's environment would hand
// the new target that command's whole payload (its target's environment,
// its rules).
func Reserved(kv string) bool {
	name, _, ok := stringsCut(kv, '=')
	if !ok {
		return false
	}
	if name == EnvMarker {
		return true
	}
	if len(name) <= len(envChunk) || name[:len(envChunk)] != envChunk {
		return false
	}
	for i := len(envChunk); i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return false
		}
	}
	return true
}

// stringsCut is strings.Cut for a byte: this package imports only what
// initialises first (see the package doc), and strings is not among it.
func stringsCut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// FromEnviron decodes the payload from a trampoline's environment.
func FromEnviron(env []string) (*Payload, error) {
	marker, ok := lookup(env, EnvMarker)
	if !ok {
		return nil, errors.New("no " + EnvMarker)
	}
	if len(marker) < 3 || marker[0] != version || marker[1] != ' ' {
		return nil, errors.New("unknown payload version " + quote(marker))
	}
	n, ok := atoi(marker[2:])
	if !ok || n < 1 || n > 1024 {
		return nil, errors.New("bad chunk count " + quote(marker))
	}
	chunks := make([]string, n)
	size := 0
	for i := range chunks {
		c, ok := lookup(env, envChunk+itoa(i))
		if !ok {
			return nil, errors.New("payload chunk " + itoa(i) + " missing")
		}
		chunks[i] = c
		size += len(c)
	}
	// One buffer for the decoded payload: the strings of the Payload
	// point into it (see reader.str), which spares the trampoline, a
	// process with a cold heap, an allocation per string.
	raw := make([]byte, 0, base64.RawStdEncoding.DecodedLen(size)+3)
	for i, c := range chunks {
		if i < n-1 && len(c)%4 != 0 {
			return nil, errors.New("payload chunk " + itoa(i) + " has a bad length")
		}
		// Decode only reads its source: the chunk's bytes, not a copy.
		src := unsafe.Slice(unsafe.StringData(c), len(c))
		m, err := base64.RawStdEncoding.Decode(raw[len(raw):cap(raw)], src)
		if err != nil {
			return nil, errors.New("payload is not base64")
		}
		raw = raw[:len(raw)+m]
	}
	return unmarshal(raw)
}

func lookup(env []string, key string) (string, bool) {
	for _, kv := range env {
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}

// Binary layout, little-endian:
//
//	"SBX2" path env(count, strings) firstFD errFD handledFS handledNet
//	scoped rules(count, {dir file dev ino path}) ports(count, {port access})
//	filters(count, {count, {code jt jf k}}) nonce0 nonce1
//	cgroupFDs(count, {fd}) flags rlimits(count, {resource cur max})
//	[only with FlagNamespaces:] mounts(count, {kind bits slot mode set clear
//	path target}) netFD netPort transparent(count, {port}) pool parentMountNSDev
//	parentMountNSIno
//
// (bits: 1 recursive, 2 create, 4 file, 8 no-follow; netPort, each
// transparent port and pool are a u32.)
// Strings are a u32 length and bytes; counts, flags and resources are u32;
// fds are i32; the rest u64. internal/spawnhelper/helper.c reads the same
// format: change both together.

func (p *Payload) marshal() []byte {
	// The exact size, so that the buffer is allocated once
	// (TestPayloadRoundTrip checks it).
	size := len(magic) + 4 + len(p.Path) + 4 + 4 + 4 + 3*8 + 4 + 4 + 16*len(p.Ports) + 4 +
		2*8 + 4 + 4*len(p.CgroupFDs) + 4 + 4 + 20*len(p.Rlimits)
	if p.Flags&FlagNamespaces != 0 {
		size += 4 + 4 + 4 + 4 + 4*len(p.Net.Transparent) + 4 + 16
		for _, m := range p.Mounts {
			size += 4*4 + 2*8 + 4 + len(m.Path) + 4 + len(m.Target)
		}
	}
	for _, e := range p.Env {
		size += 4 + len(e)
	}
	for _, r := range p.Rules {
		size += 4*8 + 4 + len(r.Path)
	}
	for _, f := range p.Filters {
		size += 4 + 8*len(f)
	}
	w := writer{b: make([]byte, 0, size)}
	w.b = append(w.b, magic...)
	w.str(p.Path)
	w.u32(uint32(len(p.Env)))
	for _, e := range p.Env {
		w.str(e)
	}
	w.u32(uint32(int32(p.FirstFD)))
	w.u32(uint32(int32(p.ErrFD)))
	w.u64(p.HandledFS)
	w.u64(p.HandledNet)
	w.u64(p.Scoped)
	w.u32(uint32(len(p.Rules)))
	for _, r := range p.Rules {
		w.u64(r.Dir)
		w.u64(r.File)
		w.u64(r.Dev)
		w.u64(r.Ino)
		w.str(r.Path)
	}
	w.u32(uint32(len(p.Ports)))
	for _, r := range p.Ports {
		w.u64(r.Port)
		w.u64(r.Access)
	}
	w.u32(uint32(len(p.Filters)))
	for _, f := range p.Filters {
		w.u32(uint32(len(f)))
		for _, ins := range f {
			w.b = append(w.b, byte(ins.Code), byte(ins.Code>>8), ins.Jt, ins.Jf)
			w.u32(ins.K)
		}
	}
	w.u64(p.ExecNonce[0])
	w.u64(p.ExecNonce[1])
	w.u32(uint32(len(p.CgroupFDs)))
	for _, fd := range p.CgroupFDs {
		w.u32(uint32(int32(fd)))
	}
	w.u32(p.Flags)
	w.u32(uint32(len(p.Rlimits)))
	for _, l := range p.Rlimits {
		w.u32(l.Resource)
		w.u64(l.Cur)
		w.u64(l.Max)
	}
	if p.Flags&FlagNamespaces != 0 {
		w.u32(uint32(len(p.Mounts)))
		for _, m := range p.Mounts {
			bits := uint32(0)
			if m.Recursive {
				bits |= 1
			}
			if m.Create {
				bits |= 2
			}
			if m.File {
				bits |= 4
			}
			if m.NoFollow {
				bits |= 8
			}
			w.u32(m.Kind)
			w.u32(bits)
			w.u32(m.Slot)
			w.u32(m.Mode)
			w.u64(m.Set)
			w.u64(m.Clear)
			w.str(m.Path)
			w.str(m.Target)
		}
		w.u32(uint32(int32(p.Net.FD)))
		w.u32(uint32(p.Net.Port))
		w.u32(uint32(len(p.Net.Transparent)))
		for _, port := range p.Net.Transparent {
			w.u32(uint32(port))
		}
		w.u32(p.Net.Pool)
		w.u64(p.ParentMountNS[0])
		w.u64(p.ParentMountNS[1])
	}
	return w.b
}

func unmarshal(b []byte) (*Payload, error) {
	r := reader{b: b}
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return nil, errors.New("bad payload magic")
	}
	r.b = r.b[len(magic):]
	p := &Payload{}
	p.Path = r.str()
	if n := r.count(4); n >= 0 {
		p.Env = make([]string, n)
		for i := range p.Env {
			p.Env[i] = r.str()
		}
	}
	p.FirstFD = int(int32(r.u32()))
	p.ErrFD = int(int32(r.u32()))
	p.HandledFS = r.u64()
	p.HandledNet = r.u64()
	p.Scoped = r.u64()
	if n := r.count(36); n >= 0 {
		p.Rules = make([]PathRule, n)
		for i := range p.Rules {
			p.Rules[i].Dir = r.u64()
			p.Rules[i].File = r.u64()
			p.Rules[i].Dev = r.u64()
			p.Rules[i].Ino = r.u64()
			p.Rules[i].Path = r.str()
		}
	}
	if n := r.count(16); n >= 0 {
		p.Ports = make([]PortRule, n)
		for i := range p.Ports {
			p.Ports[i].Port = r.u64()
			p.Ports[i].Access = r.u64()
		}
	}
	if n := r.count(4); n >= 0 {
		p.Filters = make([][]SockFilter, n)
		// All programs in one allocation: at most len(r.b)/8 instructions.
		all := make([]SockFilter, 0, len(r.b)/8)
		for i := range p.Filters {
			m := r.count(8)
			if m < 0 {
				break
			}
			f := all[len(all) : len(all)+m : len(all)+m]
			all = all[:len(all)+m]
			for j := range f {
				lo := r.u32()
				f[j] = SockFilter{Code: uint16(lo), Jt: uint8(lo >> 16), Jf: uint8(lo >> 24), K: r.u32()}
			}
			p.Filters[i] = f
		}
	}
	p.ExecNonce[0] = r.u64()
	p.ExecNonce[1] = r.u64()
	if n := r.count(4); n >= 0 {
		p.CgroupFDs = make([]int, n)
		for i := range p.CgroupFDs {
			p.CgroupFDs[i] = int(int32(r.u32()))
		}
	}
	p.Flags = r.u32()
	if n := r.count(20); n >= 0 {
		p.Rlimits = make([]Rlimit, n)
		for i := range p.Rlimits {
			p.Rlimits[i] = Rlimit{Resource: r.u32(), Cur: r.u64(), Max: r.u64()}
		}
	}
	if p.Flags&FlagNamespaces != 0 {
		if n := r.count(40); n >= 0 {
			p.Mounts = make([]MountOp, n)
			for i := range p.Mounts {
				m := &p.Mounts[i]
				m.Kind = r.u32()
				bits := r.u32()
				m.Recursive, m.Create, m.File, m.NoFollow = bits&1 != 0, bits&2 != 0, bits&4 != 0, bits&8 != 0
				m.Slot = r.u32()
				m.Mode = r.u32()
				m.Set = r.u64()
				m.Clear = r.u64()
				m.Path = r.str()
				m.Target = r.str()
				if bits&^15 != 0 || m.Kind >= mountKinds || m.Path == "" || m.Path[0] != '/' || !noNUL(m.Path) ||
					(m.Kind == MountSymlink) != (m.Target != "") || !noNUL(m.Target) ||
					(m.Kind == MountClone || m.Kind == MountAttach) && m.Slot >= MaxMountSlots {
					return nil, errors.New("bad mount step")
				}
			}
		}
		p.Net.FD = int(int32(r.u32()))
		port := r.u32()
		if port > 0xffff || p.Net.FD < -1 {
			return nil, errors.New("bad network step")
		}
		p.Net.Port = uint16(port)
		if n := r.count(4); n >= 0 {
			if n > MaxTransparentPorts || n > 0 && p.Net.FD < 0 {
				return nil, errors.New("bad network step")
			}
			for range n {
				port := r.u32()
				if port == 0 || port > 0xffff {
					return nil, errors.New("bad network step")
				}
				p.Net.Transparent = append(p.Net.Transparent, uint16(port))
			}
		}
		p.Net.Pool = r.u32()
		if p.Net.Pool > MaxInboundPool || p.Net.Pool > 0 && p.Net.FD < 0 {
			return nil, errors.New("bad network step")
		}
		p.ParentMountNS[0] = r.u64()
		p.ParentMountNS[1] = r.u64()
	}
	switch {
	case r.bad:
		return nil, errors.New("truncated payload")
	case len(r.b) != 0:
		return nil, errors.New("trailing bytes in payload")
	case p.Path == "" || p.Path[0] != '/':
		return nil, errors.New("target path is not absolute")
	case p.FirstFD < 3 || p.ErrFD != -1 && p.ErrFD != p.FirstFD:
		return nil, errors.New("bad descriptor layout")
	case len(p.CgroupFDs) > MaxCgroupFDs:
		return nil, errors.New("too many cgroup descriptors")
	case p.Flags&^knownFlags != 0:
		return nil, errors.New("payload asks for a step this trampoline does not have")
	}
	for _, fd := range p.CgroupFDs {
		// Above the target's descriptors, so that execve closes them.
		if fd < p.FirstFD || fd == p.ErrFD {
			return nil, errors.New("bad descriptor layout")
		}
	}
	for _, s := range p.Env {
		if !noNUL(s) {
			return nil, errors.New("NUL in environment")
		}
	}
	for _, r := range p.Rules {
		if !noNUL(r.Path) || r.Path == "" {
			return nil, errors.New("bad rule path")
		}
	}
	if !noNUL(p.Path) {
		return nil, errors.New("NUL in target path")
	}
	return p, nil
}

func noNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	return true
}

type writer struct{ b []byte }

func (w *writer) u32(v uint32) { w.b = append(w.b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }
func (w *writer) u64(v uint64) { w.u32(uint32(v)); w.u32(uint32(v >> 32)) }
func (w *writer) str(s string) { w.u32(uint32(len(s))); w.b = append(w.b, s...) }

// reader decodes; on a short buffer it sets bad and returns zero values.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u32() uint32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (r *reader) u64() uint64 { lo := r.u32(); return uint64(lo) | uint64(r.u32())<<32 }

// str returns a string that shares the reader's buffer, which must
// therefore never be modified afterwards.
func (r *reader) str() string {
	b := r.take(int(r.u32()))
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// count reads an element count and checks that the rest of the buffer could
// hold that many elements of at least min bytes each (so that a corrupt
// count cannot make a huge allocation). It returns -1 when it cannot.
func (r *reader) count(min int) int {
	n := int(r.u32())
	if r.bad || n > len(r.b)/min {
		r.bad = true
		return -1
	}
	return n
}

// Failure is a trampoline's report of why the target did not start.
type Failure struct {
	Step   string        // e.g. "landlock_restrict_self", "execve"
	Errno  syscall.Errno // 0 when the failure is not a system call's
	Detail string        // e.g. the path concerned
}

// ExitCode is the trampoline's exit status for f.
func (f Failure) ExitCode() int {
	switch {
	case f.Step != "execve":
		return ExitSetup
	case f.Errno == syscall.ENOENT:
		return ExitNotFound
	default:
		return ExitCannotEx
	}
}

func (f Failure) Error() string {
	s := f.Step
	if f.Detail != "" {
		s += " " + f.Detail
	}
	if f.Errno != 0 {
		s += ": " + f.Errno.Error()
	}
	return s
}

// Marshal encodes f for the failure pipe: "errno\x00step\x00detail".
func (f Failure) Marshal() []byte {
	return []byte(itoa(int(f.Errno)) + "\x00" + f.Step + "\x00" + f.Detail)
}

// UnmarshalFailure decodes what Marshal made.
func UnmarshalFailure(b []byte) (Failure, error) {
	parts := [3]string{}
	s, k := string(b), 0
	for i := 0; i < len(s) && k < 2; i++ {
		if s[i] == 0 {
			parts[k] = s[:i]
			s, i, k = s[i+1:], -1, k+1
		}
	}
	if k != 2 {
		return Failure{}, errors.New("malformed failure report " + quote(string(b)))
	}
	parts[2] = s
	n, ok := atoi(parts[0])
	if !ok {
		return Failure{}, errors.New("malformed failure report " + quote(string(b)))
	}
	return Failure{Errno: syscall.Errno(n), Step: parts[1], Detail: parts[2]}, nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [24]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return "\"" + s + "\""
}
