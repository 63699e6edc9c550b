/*
 * c/helper.c: the child half of the sandbox's WrapCommand and Run on
 * linux/amd64 and linux/arm64. See doc.go for the design; this comment says
 * what the program does, in order. Every step either succeeds or ends the
 * process before the target runs (fail closed).
 *
 *  0. Refuse to run set-user-ID or set-group-ID (real and effective ids
 *     differ): the payload comes from the environment, which whoever
 *     executes the file controls.
 *  1. Find the payload in the environment (OPENPARALLAX_SANDBOX_TRAMPOLINE
 *     = "2 N", then N base64 chunks OPENPARALLAX_SANDBOX_P0...), decode it
 *     and parse it (format: internal/trampoline/payload.go), checking every
 *     length against the buffer. argv[0] must be the trampoline's name; the
 *     target's argv is argv[1:], exactly as the kernel gave it.
 *  2. Mark the failure pipe close-on-exec; write "0" to each cgroup.procs
 *     descriptor (one per hierarchy; any failure ends the child); mark
 *     every descriptor from FirstFD up close-on-exec (the target gets 0-2
 *     and cmd.ExtraFiles; this file's own memfd is above them).
 * 2a. With payload flag 1, the namespace step (ns_step below), in the new
 *     namespaces the parent cloned this process into: refuse the caller's
 *     own mount namespace; perform the mount ops the parent planned (for
 *     the sandbox's own root also: a fresh procfs; the pivot, chdir into the
 *     new root's tmpfs, pivot_root(".", "."), umount2(".", MNT_DETACH) of
 *     the old root, chdir("/"); a symbolic link made in the new root, its
 *     parents first; a tmpfs or procfs whose mount point is made first in
 *     the plan's tmpfs); chdir
 *     to the working directory again by its path; bring lo up and hand the
 *     egress listener (and the transparent path's sockets and the inbound
 *     pool, when asked for) to the caller. With flag 2 (the parent's
 *     probe), exit 0 right after it.
 *  3. Landlock: create the ruleset; open each rule's path (O_PATH, following
 *     symlinks as they are now), skip it when it is gone, when it is not the
 *     object the parent resolved (device and inode, when the parent recorded
 *     them), or when it is not what it was granted as; add the rest (a
 *     directory's rights if it is one, else a file's; for a path with no
 *     recorded identity landlock_add_rule's EINVAL tells, not fstat).
 *  4. Drop every capability: the bounding set (when CAP_SETPCAP allows),
 *     the ambient set, then permitted, effective and inheritable; check with
 *     capget that nothing is left.
 *  5. no_new_privs; landlock_restrict_self; set the payload's resource
 *     limits (after the opens: an OpenFiles limit may be lower than the
 *     number of rules; after the drop: a limit is never raised); load each
 *     seccomp program.
 *  6. execve the target, with the exec nonce in the fourth and fifth
 *     argument registers (see doc.go: the filter accepts only that execve).
 *
 * Failures: "errno\0step\0detail" on the failure pipe when there is one,
 * else "sandbox: cannot start PATH: step detail: reason\n" on stderr. Exit
 * status 127 if execve said ENOENT, 126 if execve failed otherwise, 125 for
 * everything else.
 *
 * Built with -nostdlib -static -ffreestanding: no libc, no start files.
 * The compiler may still emit calls to memset/memcpy, defined below.
 */

typedef unsigned long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#if defined(__x86_64__)
enum {
	NR_write = 1, NR_close = 3, NR_fstat = 5, NR_mmap = 9, NR_ioctl = 16,
	NR_socket = 41, NR_sendto = 44, NR_recvfrom = 45, NR_sendmsg = 46,
	NR_bind = 49, NR_listen = 50, NR_setsockopt = 54,
	NR_execve = 59, NR_fcntl = 72, NR_getcwd = 79, NR_chdir = 80,
	NR_getresuid = 118, NR_getresgid = 120, NR_capget = 125,
	NR_capset = 126, NR_prctl = 157, NR_mount = 165, NR_exit_group = 231,
	NR_openat = 257, NR_mkdirat = 258, NR_prlimit64 = 302, NR_seccomp = 317,
	NR_pivot_root = 155, NR_umount2 = 166, NR_symlinkat = 266,
	O_NOFOLLOW = 0400000,
};
#define ST_MODE_OFF 24 /* struct stat: dev 0, ino 8, nlink 16, mode 24 */

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

__asm__(".text\n.global _start\n_start:\n"
	"\txor %ebp, %ebp\n\tmov %rsp, %rdi\n\tand $-16, %rsp\n"
	"\tcall start\n\thlt\n");
#elif defined(__aarch64__)
enum {
	NR_getcwd = 17, NR_fcntl = 25, NR_ioctl = 29, NR_mkdirat = 34,
	NR_mount = 40, NR_chdir = 49, NR_openat = 56, NR_close = 57,
	NR_write = 64, NR_fstat = 80, NR_capget = 90, NR_capset = 91,
	NR_exit_group = 94, NR_getresuid = 148, NR_getresgid = 150,
	NR_prctl = 167, NR_socket = 198, NR_bind = 200, NR_listen = 201,
	NR_sendto = 206, NR_recvfrom = 207, NR_setsockopt = 208, NR_sendmsg = 211, NR_execve = 221, NR_mmap = 222, NR_prlimit64 = 261,
	NR_seccomp = 277, NR_symlinkat = 36, NR_umount2 = 39, NR_pivot_root = 41,
	O_NOFOLLOW = 0100000,
};
#define ST_MODE_OFF 16 /* struct stat: dev 0, ino 8, mode 16 */

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

__asm__(".text\n.global _start\n_start:\n"
	"\tmov x29, #0\n\tmov x30, #0\n\tmov x0, sp\n\tbl start\n\tbrk #0\n");
#else
#error "spawnhelper: only linux/amd64 and linux/arm64"
#endif

/* The unified system call table (the same on both). */
enum {
	NR_open_tree = 428, NR_move_mount = 429, NR_close_range = 436,
	NR_mount_setattr = 442, NR_ll_create = 444, NR_ll_add = 445,
	NR_ll_restrict = 446,
};

#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

enum {
	ENOENT = 2, EINTR = 4, EEXIST = 17, ENOTDIR = 20, EINVAL = 22,
	AT_FDCWD = -100, O_PATH = 010000000, O_CLOEXEC = 02000000,
	F_SETFD = 2, FD_CLOEXEC = 1, S_IFMT = 0170000, S_IFDIR = 0040000,
	CLOSE_RANGE_CLOEXEC = 1 << 2,
	PR_CAPBSET_DROP = 24, PR_SET_NO_NEW_PRIVS = 38, PR_CAP_AMBIENT = 47,
	PR_CAP_AMBIENT_CLEAR_ALL = 4, CAP_SETPCAP = 8,
	LANDLOCK_RULE_PATH_BENEATH = 1, LANDLOCK_RULE_NET_PORT = 2,
	/* The rights landlock_add_rule accepts on a file that is not a
	 * directory: execute, write_file, read_file, truncate, ioctl_dev. */
	LL_FILE_RIGHTS = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 14 | 1 << 15,
	SECCOMP_SET_MODE_FILTER = 1,
	PROT_RW = 3, MAP_PRIVATE_ANON = 0x22,
};
#define CAPS_V3 0x20080522

/* Called by the compiler for struct copies and zeroing. */
void *memset(void *d, int c, u64 n)
{
	u8 *p = d;
	while (n--)
		*p++ = (u8)c;
	return d;
}
void *memcpy(void *d, const void *s, u64 n)
{
	u8 *p = d;
	const u8 *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

static u64 slen(const char *s)
{
	u64 n = 0;
	while (s[n])
		n++;
	return n;
}

/* prefix returns what follows pre in s, or 0 when s does not start so. */
static const char *prefix(const char *s, const char *pre)
{
	while (*pre)
		if (*s++ != *pre++)
			return 0;
	return s;
}

/* ---- failure reports ---------------------------------------------- */

static int errfd = -1;
static const char *target = "(unknown target)";
static char msg[8192];
/* The arena (and the decoded payload when it came in several chunks), when
 * it fits: in .bss, whose page tables exist already (next to this program's
 * code). Memory from mmap(2) lands elsewhere in the address space and costs
 * new page tables, made on the first touch and freed again at the target's
 * execve: on a virtual machine where page-table writes trap, that was a
 * tenth of this program's time (perf, bench/spawn.sh). Untouched pages of it
 * cost nothing. Defined between msg and the small variables below because
 * GCC lays .bss out in reverse order of definition: they then share the
 * page of .data, which execve has already touched, and the arena follows
 * them (a page fewer to touch; nothing depends on it for correctness). */
static u8 buf[192 << 10] __attribute__((aligned(64)));
static u64 msglen;

static void put(const char *s, u64 n)
{
	while (n-- && msglen < sizeof msg)
		msg[msglen++] = *s++;
}
static void puts_(const char *s) { put(s, slen(s)); }
static void putnum(long v)
{
	char b[24];
	int i = sizeof b;
	int neg = v < 0;
	u64 u = neg ? -(u64)v : (u64)v;
	do
		b[--i] = (char)('0' + u % 10);
	while (u /= 10);
	if (neg)
		b[--i] = '-';
	put(b + i, sizeof b - i);
}

/* Go's syscall.Errno strings, so that both child halves say the same. */
static const char *errstr(long e)
{
	switch (e) {
	case 1: return "operation not permitted";
	case 2: return "no such file or directory";
	case 4: return "interrupted system call";
	case 5: return "input/output error";
	case 7: return "argument list too long";
	case 8: return "exec format error";
	case 9: return "bad file descriptor";
	case 12: return "cannot allocate memory";
	case 13: return "permission denied";
	case 14: return "bad address";
	case 16: return "device or resource busy";
	case 17: return "file exists";
	case 19: return "no such device";
	case 20: return "not a directory";
	case 21: return "is a directory";
	case 22: return "invalid argument";
	case 24: return "too many open files";
	case 26: return "text file busy";
	case 30: return "read-only file system";
	case 36: return "file name too long";
	case 38: return "function not implemented";
	case 40: return "too many levels of symbolic links";
	case 71: return "protocol error";
	case 88: return "socket operation on non-socket";
	case 95: return "operation not supported";
	case 97: return "address family not supported by protocol";
	case 98: return "address already in use";
	}
	return 0;
}

static void exit_(int code)
{
	for (;;)
		sys3(NR_exit_group, code, 0, 0);
}

/* fail reports step (errno e, 0 if none; detail may be 0) and exits. */
__attribute__((noreturn)) static void fail(const char *step, long e, const char *detail)
{
	int code = 125;
	if (step[0] == 'e' && prefix(step, "execve") && !step[6])
		code = e == ENOENT ? 127 : 126;
	msglen = 0;
	if (errfd >= 0) {
		putnum(e);
		put("", 1);
		puts_(step);
		put("", 1);
		if (detail)
			puts_(detail);
		sys3(NR_write, errfd, msg, msglen);
	} else {
		puts_("sandbox: cannot start ");
		puts_(target);
		puts_(": ");
		puts_(step);
		if (detail) {
			puts_(" ");
			puts_(detail);
		}
		if (e) {
			const char *s = errstr(e);
			puts_(": ");
			if (s) {
				puts_(s);
			} else {
				puts_("errno ");
				putnum(e);
			}
		}
		puts_("\n");
		sys3(NR_write, 2, msg, msglen);
	}
	exit_(code);
	__builtin_unreachable();
}

/* check fails with step when r is an error return (-4095..-1). */
static long check(long r, const char *step, const char *detail)
{
	if (r < 0 && r > -4096)
		fail(step, -r, detail);
	return r;
}

/* ---- payload --------------------------------------------------------- */

#define ARG0 "openparallax-sandbox-trampoline"
#define MARKER "OPENPARALLAX_SANDBOX_TRAMPOLINE="
#define CHUNK "OPENPARALLAX_SANDBOX_P"

/* b64 decodes unpadded standard base64 from s (n chars) to out; returns
 * the number of bytes written, or -1 when n % 4 is 1 or a character is
 * not in the alphabet. out may be s: each group of four characters is read
 * before its three bytes are written, at or before where the group began.
 * A table lookup per character, four at a time: the payload grows with
 * every rule (~95 characters for an exec grant's), and the branches per
 * character this replaced were a tenth of the helper's CPU time for a
 * realistic payload (25 KB of base64: ~80 µs of ~800, perf; ~10 µs now).
 * It accepts exactly the strings they did and makes the same bytes (a
 * last group's unused low bits are ignored, as before). */
static long b64(const char *s, u64 n, u8 *out)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	u8 val[256]; /* a character's value plus one; 0: not in the alphabet */
	u64 i, o = 0;
	u32 a, b, c, d;
	if (n % 4 == 1)
		return -1;
	memset(val, 0, sizeof val);
	for (i = 0; i < 64; i++)
		val[(u8)alpha[i]] = (u8)(i + 1);
	/* A character not in the alphabet has val 0, so val - 1 wraps to
	 * 0xffffffff: above 63, like no character's value. */
	for (i = 0; n - i >= 4; i += 4) {
		a = val[(u8)s[i]] - 1u;
		b = val[(u8)s[i + 1]] - 1u;
		c = val[(u8)s[i + 2]] - 1u;
		d = val[(u8)s[i + 3]] - 1u;
		if ((a | b | c | d) > 63)
			return -1;
		a = a << 18 | b << 12 | c << 6 | d;
		out[o] = (u8)(a >> 16);
		out[o + 1] = (u8)(a >> 8);
		out[o + 2] = (u8)a;
		o += 3;
	}
	if (i < n) { /* two or three characters left: one or two bytes */
		a = val[(u8)s[i]] - 1u;
		b = val[(u8)s[i + 1]] - 1u;
		c = n - i == 3 ? val[(u8)s[i + 2]] - 1u : 0;
		if ((a | b | c) > 63)
			return -1;
		a = a << 18 | b << 12 | c << 6;
		out[o++] = (u8)(a >> 16);
		if (n - i == 3)
			out[o++] = (u8)(a >> 8);
	}
	return (long)o;
}

/* A reader over the decoded payload; any overrun sets bad. */
struct rd {
	const u8 *p, *end;
	int bad;
};

static const u8 *take(struct rd *r, u64 n)
{
	const u8 *p = r->p;
	if (r->bad || n > (u64)(r->end - r->p)) {
		r->bad = 1;
		return 0;
	}
	r->p += n;
	return p;
}
static u32 u32_(struct rd *r)
{
	const u8 *b = take(r, 4);
	return b ? (u32)b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24 : 0;
}
static u64 u64_(struct rd *r)
{
	u64 lo = u32_(r);
	return lo | (u64)u32_(r) << 32;
}

/* count reads an element count whose elements take at least min bytes. */
static u32 count(struct rd *r, u64 min)
{
	u32 n = u32_(r);
	if (r->bad || n > (u64)(r->end - r->p) / min)
		r->bad = 1;
	return r->bad ? 0 : n;
}

/* str copies a length-prefixed string to the arena, NUL-terminated, and
 * fails on an embedded NUL. */
static char *arena;
static u64 arenalen, arenacap;

static char *str(struct rd *r)
{
	u32 n = u32_(r);
	const u8 *b = take(r, n);
	char *s;
	u64 i;
	if (!b || arenacap - arenalen < (u64)n + 1) {
		r->bad = 1;
		return 0;
	}
	s = arena + arenalen;
	for (i = 0; i < n; i++) {
		if (!b[i]) {
			r->bad = 1;
			return 0;
		}
		s[i] = (char)b[i];
	}
	s[n] = 0;
	arenalen += (u64)n + 1;
	return s;
}

static void *alloc(u64 n)
{
	long p;
	if (n <= sizeof buf)
		return buf;
	n = (n + 4095) & ~4095UL;
	p = sys6(NR_mmap, 0, (long)n, PROT_RW, MAP_PRIVATE_ANON, -1, 0);
	check(p, "mmap", 0);
	return (void *)p;
}

/* ---- the steps ------------------------------------------------------- */

struct ruleset_attr {
	u64 fs, net, scoped;
};
struct path_beneath {
	u64 allowed;
	int fd;
} __attribute__((packed));
struct net_port {
	u64 allowed, port;
};
struct sock_fprog {
	u16 len;
	const void *filter;
};
struct cap_hdr {
	u32 version;
	int pid;
};
struct cap_data {
	u32 eff, perm, inh;
};
struct rlimit {
	u64 cur, max;
};

static void drop_caps(void)
{
	struct cap_hdr h = {CAPS_V3, 0};
	struct cap_data d[2] = {{0, 0, 0}, {0, 0, 0}};
	int c;

	check(sys3(NR_capget, &h, d, 0), "capget", 0);
	if (d[0].perm & 1u << CAP_SETPCAP) {
		/* Make CAP_SETPCAP effective, then empty the bounding set:
		 * execve by uid 0 grants the bounding set (no_new_privs then
		 * limits it to the old permitted set, which is emptied below:
		 * both hold). */
		d[0].eff |= 1u << CAP_SETPCAP;
		check(sys3(NR_capset, &h, d, 0), "capset", "(CAP_SETPCAP)");
		for (c = 0; c < 64; c++) {
			long r = sys3(NR_prctl, PR_CAPBSET_DROP, c, 0);
			if (r == -EINVAL)
				break; /* past CAP_LAST_CAP */
			check(r, "prctl(PR_CAPBSET_DROP)", 0);
		}
	}
	check(sys6(NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0),
	      "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", 0);
	memset(d, 0, sizeof d);
	check(sys3(NR_capset, &h, d, 0), "capset", 0);
	check(sys3(NR_capget, &h, d, 0), "capget", 0);
	if (d[0].eff | d[0].perm | d[0].inh | d[1].eff | d[1].perm | d[1].inh)
		fail("capset", 0, "(capabilities remain after dropping them all)");
}

/* ---- the namespace step (payload flag 1) ------------------------------ */

/* It runs in the new namespaces the parent cloned this process into (the
 * sandbox package's ns_linux.go), after step 2 and before Landlock, and does
 * what internal/trampoline's namespaceStep, ApplyMounts and netStep do, in
 * the same order and with the same failure reports: the Go trampoline keeps
 * the same step for other architectures, and .ci/run runs the namespace
 * tests through both. The parent planned every mount (internal/mountns.Build:
 * a list of mount-API calls, tested as data); this code only performs the
 * list, refusing anything it does not know. */

enum {
	FLAG_NS = 1, FLAG_PROBE = 2,
	M_PRIVATE = 0, M_CLONE, M_SETATTR, M_TMPFS, M_ATTACH, M_MASKFILE,
	M_PROC, M_PIVOT, M_SYMLINK, M_KINDS,
	B_RECURSIVE = 1, B_CREATE = 2, B_FILE = 4, B_NOFOLLOW = 8,
	OPEN_TREE_CLONE = 1, AT_RECURSIVE = 0x8000, AT_SYMLINK_NOFOLLOW = 0x100,
	MOVE_MOUNT_F_EMPTY_PATH = 4, MS_REC = 0x4000, MS_PRIVATE = 1 << 18, MNT_DETACH = 2,
	MOUNT_ATTR_RDONLY = 1, MOUNT_ATTR_NOSUID = 2, MOUNT_ATTR_NODEV = 4,
	MOUNT_ATTR_NOEXEC = 8,
	O_WRONLY = 1, O_CREAT = 0100, O_EXCL = 0200,
	AF_INET = 2, AF_INET6 = 10, AF_NETLINK = 16, SOCK_STREAM = 1,
	SOCK_DGRAM = 2, SOCK_RAW = 3, SOCK_CLOEXEC = O_CLOEXEC,
	IPPROTO_IPV6 = 41, IPV6_V6ONLY = 26, EPROTO = 71,
	SIOCGIFFLAGS = 0x8913, SIOCSIFFLAGS = 0x8914, SIOCGIFINDEX = 0x8933, IFF_UP = 1,
	RTM_NEWROUTE = 24, NLMSG_ERROR = 2, NLM_FLAGS = 0x605, RT_TABLE_LOCAL = 255,
	RTPROT_BOOT = 3, RT_SCOPE_HOST = 254, RTN_LOCAL = 2, RTA_OIF = 4,
	RESOLVER_PORT = 53, MAX_TPORTS = 256, MAX_POOL = 256,
	SOL_SOCKET = 1, SCM_RIGHTS = 1, LISTEN_QUEUE = 4096,
	MAX_SLOTS = 1024,
};

struct mount_op {
	u32 kind, bits, slot, mode;
	u64 set, clear;
	const char *path, *target;
};

/* peek reads a string without copying it, for the check: "/" for one
 * that starts with '/', "x" for another non-empty one, "" for an empty
 * one, 0 for one that holds a NUL (or overruns: r->bad). */
static const char *peek(struct rd *r)
{
	u32 n = u32_(r);
	const u8 *b = take(r, n);
	u64 i;
	for (i = 0; b && i < n; i++)
		if (!b[i])
			return 0;
	return !b ? 0 : !n ? "" : b[0] == '/' ? "/" : "x";
}

/* mount_op reads one op and returns 0, or -1 for an op that was read but
 * is not one the parent makes (an overrun sets r->bad instead). With copy 0
 * it only checks it (the path is not copied to the arena: the ops are read
 * twice, checked in full before the first is performed). */
static int mount_op(struct rd *r, struct mount_op *o, int copy)
{
	o->kind = u32_(r);
	o->bits = u32_(r);
	o->slot = u32_(r);
	o->mode = u32_(r);
	o->set = u64_(r);
	o->clear = u64_(r);
	o->path = copy ? str(r) : peek(r);
	o->target = copy ? str(r) : peek(r);
	if (r->bad)
		return 0;
	if (!o->path || o->path[0] != '/' || o->kind >= M_KINDS || (o->bits & ~15U) ||
	    !o->target || (o->kind == M_SYMLINK) != (o->target[0] != 0) ||
	    ((o->kind == M_CLONE || o->kind == M_ATTACH) && o->slot >= MAX_SLOTS))
		return -1;
	return 0;
}

/* The network step's part of the payload: the handoff socket, the proxy's
 * port, the transparent path's ports (u32 each, still encoded), and the
 * size of the inbound pool. */
struct netstep {
	int fd;
	u32 port, nports;
	const u8 *ports;
	u32 pool;
};

/* ns_check reads the namespace section and fails as the Go trampoline's
 * parser does on an op or a network step it would refuse. */
static void ns_check(struct rd *r, struct netstep *n, u64 *nsdev, u64 *nsino)
{
	struct mount_op o;
	u32 i, nops = count(r, 40);
	for (i = 0; i < nops; i++)
		if (mount_op(r, &o, 0))
			fail("trampoline", 0, "invalid invocation (bad mount step)");
	n->fd = (int)u32_(r);
	n->port = u32_(r);
	if (!r->bad && (n->port > 0xffff || n->fd < -1))
		fail("trampoline", 0, "invalid invocation (bad network step)");
	n->nports = count(r, 4);
	n->ports = take(r, 4 * (u64)n->nports);
	if (!r->bad && (n->nports > MAX_TPORTS || (n->nports && n->fd < 0)))
		fail("trampoline", 0, "invalid invocation (bad network step)");
	for (i = 0; !r->bad && i < n->nports; i++) {
		struct rd pr = {n->ports + 4 * (u64)i, n->ports + 4 * (u64)i + 4, 0};
		u32 p = u32_(&pr);
		if (!p || p > 0xffff)
			fail("trampoline", 0, "invalid invocation (bad network step)");
	}
	n->pool = u32_(r);
	if (!r->bad && (n->pool > MAX_POOL || (n->pool && n->fd < 0)))
		fail("trampoline", 0, "invalid invocation (bad network step)");
	*nsdev = u64_(r);
	*nsino = u64_(r);
}

/* Clone descriptors by slot, stored plus one (0: empty). */
static int slots[MAX_SLOTS];

static long mount_setattr_(const char *path, long flags, u64 set, u64 clear)
{
	u64 attr[4] = {set, clear, 0, 0}; /* struct mount_attr, version 0 */
	return sys6(NR_mount_setattr, AT_FDCWD, (long)path, flags, (long)attr, sizeof attr, 0);
}

static long move_mount_(int fd, const char *to)
{
	return sys6(NR_move_mount, fd, (long)"", AT_FDCWD, (long)to, MOVE_MOUNT_F_EMPTY_PATH, 0);
}

/* mount_point makes path (a directory, or an empty file with B_FILE) and
 * its missing parents. Build asks for it only beneath a tmpfs of the plan,
 * so nothing is made on a host filesystem. */
static char pbuf[4096];

static long mount_point(const char *path, int file)
{
	u64 n = slen(path), end = n, i;
	long e;
	if (n >= sizeof pbuf)
		return -36; /* ENAMETOOLONG */
	memcpy(pbuf, path, n + 1);
	if (file)
		for (end = n; end > 0 && path[end] != '/';)
			end--;
	for (i = 1; i <= end; i++) {
		if (i < end && path[i] != '/')
			continue;
		pbuf[i] = 0;
		e = sys3(NR_mkdirat, AT_FDCWD, pbuf, 0755);
		pbuf[i] = path[i];
		if (e < 0 && e != -EEXIST)
			return e;
	}
	if (!file)
		return 0;
	e = sys6(NR_openat, AT_FDCWD, (long)path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644, 0, 0);
	if (e < 0)
		return e;
	sys3(NR_close, e, 0, 0);
	return 0;
}

/* make_point makes the directory path and its parents, as a mount point
 * (MountTmpfs and MountProc with Create). */
static void make_point(const char *path)
{
	long e = mount_point(path, 0);
	if (e < 0)
		fail("mkdir (mount point in the plan's tmpfs)", -e, path);
}

/* apply_mount performs one op, failing with its step's name (or a
 * sub-step's) and the op's path, as ApplyMounts reports. */
static void apply_mount(const struct mount_op *o)
{
	static const char *names[M_KINDS] = {
		"mount(MS_PRIVATE)", "open_tree", "mount_setattr", "mount(tmpfs)", "move_mount", "mask file",
		"mount(proc)", "pivot_root", "symlink",
	};
	static char dir[4096];
	u64 k;
	const char *step = names[o->kind];
	long e, fd, fl;
	switch (o->kind) {
	case M_PRIVATE:
		e = sys6(NR_mount, 0, (long)o->path, 0, MS_REC | MS_PRIVATE, 0, 0);
		break;
	case M_CLONE:
		fl = OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE;
		if (o->bits & B_NOFOLLOW)
			fl |= AT_SYMLINK_NOFOLLOW;
		e = sys3(NR_open_tree, AT_FDCWD, o->path, fl);
		if (e >= 0 && slots[o->slot]) {
			sys3(NR_close, e, 0, 0);
			fail("open_tree (slot used twice)", EINVAL, o->path);
		}
		if (e >= 0)
			slots[o->slot] = (int)e + 1;
		break;
	case M_SETATTR:
		fl = o->bits & B_RECURSIVE ? AT_RECURSIVE : 0;
		if (o->bits & B_NOFOLLOW)
			fl |= AT_SYMLINK_NOFOLLOW;
		e = mount_setattr_(o->path, fl, o->set, o->clear);
		break;
	case M_TMPFS: {
		/* "mode=0NNN": the mode in octal with a leading 0, as Go's
		 * octal() writes it. The MOUNT_ATTR_ bits of set are the MS_
		 * flags' values. */
		char data[24] = "mode=";
		char d[12];
		int k = 0, j = 5;
		u32 m = o->mode;
		do
			d[k++] = (char)('0' + (m & 7));
		while (m >>= 3);
		data[j++] = '0';
		while (k)
			data[j++] = d[--k];
		data[j] = 0;
		if (o->bits & B_CREATE)
			make_point(o->path);
		e = sys6(NR_mount, (long)"tmpfs", (long)o->path, (long)"tmpfs", (long)(o->set & 15), (long)data, 0);
		break;
	}
	case M_ATTACH:
		if (!slots[o->slot])
			fail("move_mount (no such clone)", EINVAL, o->path);
		fd = slots[o->slot] - 1;
		slots[o->slot] = 0;
		e = 0;
		if (o->bits & B_CREATE) {
			e = mount_point(o->path, o->bits & B_FILE);
			if (e < 0) {
				sys3(NR_close, fd, 0, 0);
				fail("mkdir (mount point in the plan's tmpfs)", -e, o->path);
			}
		}
		e = move_mount_(fd, o->path);
		sys3(NR_close, fd, 0, 0);
		break;
	case M_PROC:
		if (o->bits & B_CREATE)
			make_point(o->path);
		e = sys6(NR_mount, (long)"proc", (long)o->path, (long)"proc", (long)(o->set & 15), 0, 0);
		break;
	case M_PIVOT:
		/* Into the new root (the plan's tmpfs at path); the old root,
		 * stacked on it by pivot_root(".", "."), is detached. */
		check(sys3(NR_chdir, o->path, 0, 0), "chdir (the new root)", o->path);
		check(sys3(NR_pivot_root, ".", ".", 0), step, o->path);
		check(sys3(NR_umount2, ".", MNT_DETACH, 0), "umount2 (the old root)", o->path);
		e = sys3(NR_chdir, "/", 0, 0);
		step = "chdir /";
		break;
	case M_SYMLINK:
		/* The link's missing parents first (in the own root's tmpfs). */
		for (k = slen(o->path); k > 0 && o->path[k] != '/';)
			k--;
		if (k > 0) {
			if (k >= sizeof dir)
				fail("mkdir (the link's directory in the plan's tmpfs)", 36, o->path);
			memcpy(dir, o->path, k);
			dir[k] = 0;
			e = mount_point(dir, 0);
			if (e < 0)
				fail("mkdir (the link's directory in the plan's tmpfs)", -e, o->path);
		}
		e = sys3(NR_symlinkat, o->target, AT_FDCWD, o->path);
		break;
	default: /* M_MASKFILE */
		/* /dev/null, nodev and read-only: with nodev, opening the
		 * device fails with EACCES whatever the opener's capabilities
		 * (see internal/trampoline's ApplyMounts). */
		fd = sys3(NR_open_tree, AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | O_CLOEXEC);
		check(fd, "open_tree /dev/null", o->path);
		e = move_mount_(fd, o->path);
		sys3(NR_close, fd, 0, 0);
		check(e, "move_mount /dev/null", o->path);
		e = mount_setattr_(o->path, 0,
				   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
		break;
	}
	check(e, step, o->path);
}

/* portdetail writes pre, port in decimal, then post to d (at most 64
 * bytes): the details Go's netStep gives ("127.0.0.1:3128 (egress
 * listener)"). */
static const char *portdetail(char *d, const char *pre, u32 port, const char *post)
{
	u64 k = 0, t = 1;
	while (*pre)
		d[k++] = *pre++;
	while (port / t >= 10)
		t *= 10;
	for (; t; t /= 10)
		d[k++] = (char)('0' + port / t % 10);
	d[k++] = ' ';
	while (*post && k < 63)
		d[k++] = *post++;
	d[k] = 0;
	return d;
}

/* hand_over sends fd over sock (SCM_RIGHTS, one data byte: tag) and
 * closes it: the caller holds it now (the message holds a reference until
 * it is received). */
static void hand_over(int sock, long fd, char tag)
{
	struct {
		u64 len;
		int level, type, fd, pad;
	} cm;
	struct {
		const void *base;
		u64 len;
	} iov = {&tag, 1};
	struct {
		void *name;
		u32 namelen, pad0;
		void *iov;
		u64 iovlen;
		void *control;
		u64 controllen;
		int flags, pad1;
	} mh;

	memset(&cm, 0, sizeof cm);
	cm.len = 20; /* CMSG_LEN(sizeof(int)) */
	cm.level = SOL_SOCKET;
	cm.type = SCM_RIGHTS;
	cm.fd = (int)fd;
	memset(&mh, 0, sizeof mh);
	mh.iov = &iov;
	mh.iovlen = 1;
	mh.control = &cm;
	mh.controllen = 24; /* CMSG_SPACE(sizeof(int)) */
	check(sys3(NR_sendmsg, sock, &mh, 0), "sendmsg", "(egress listener handoff)");
	check(sys3(NR_close, fd, 0, 0), "close", "(egress listener)");
}

/* loopback_up sets IFF_UP on lo (refusing a namespace whose lo is up
 * already: never a new one) and returns its interface index. */
static int loopback_up(void)
{
	struct {
		char name[16];
		union {
			u16 flags;
			int index;
		} u;
		u8 pad[20];
	} ifr;
	long fd;

	fd = check(sys3(NR_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), "socket", "(to bring lo up)");
	memset(&ifr, 0, sizeof ifr);
	ifr.name[0] = 'l';
	ifr.name[1] = 'o';
	check(sys3(NR_ioctl, fd, SIOCGIFFLAGS, &ifr), "ioctl(SIOCGIFFLAGS)", "lo");
	if (ifr.u.flags & IFF_UP)
		fail("network step", 0, "lo is already up: not a new network namespace "
					"(was cmd.SysProcAttr replaced after WrapCommand?)");
	ifr.u.flags |= IFF_UP;
	check(sys3(NR_ioctl, fd, SIOCSIFFLAGS, &ifr), "ioctl(SIOCSIFFLAGS)", "lo up");
	check(sys3(NR_ioctl, fd, SIOCGIFINDEX, &ifr), "ioctl(SIOCGIFINDEX)", "lo");
	sys3(NR_close, fd, 0, 0);
	return ifr.u.index;
}

/* local_route adds "local 0.0.0.0/0 dev lo" (or ::/0) to the local table
 * with rtnetlink and reads the acknowledgement: see internal/trampoline's
 * localRoutes. */
static void local_route(long nl, u8 family, u32 seq, int lo, const char *detail)
{
	/* struct nlmsghdr, struct rtmsg, one rtattr (RTA_OIF). */
	struct {
		u32 len;
		u16 type, flags;
		u32 seq, pid;
		u8 family, dst_len, src_len, tos, table, protocol, scope, type_;
		u32 rflags;
		u16 alen, atype;
		int oif;
	} m;
	u32 ack[64];
	u16 nl_addr[6] = {AF_NETLINK, 0, 0, 0, 0, 0}; /* struct sockaddr_nl */
	long n;

	memset(&m, 0, sizeof m);
	m.len = sizeof m;
	m.type = RTM_NEWROUTE;
	m.flags = NLM_FLAGS;
	m.seq = seq;
	m.family = family;
	m.table = RT_TABLE_LOCAL;
	m.protocol = RTPROT_BOOT;
	m.scope = RT_SCOPE_HOST;
	m.type_ = RTN_LOCAL;
	m.alen = 8;
	m.atype = RTA_OIF;
	m.oif = lo;
	check(sys6(NR_sendto, nl, (long)&m, sizeof m, 0, (long)nl_addr, sizeof nl_addr),
	      "netlink(RTM_NEWROUTE)", detail);
	n = check(sys6(NR_recvfrom, nl, (long)ack, sizeof ack, 0, 0, 0), "netlink(RTM_NEWROUTE)", detail);
	/* struct nlmsghdr, then struct nlmsgerr's int error (0: done). */
	if (n < 20 || (ack[1] & 0xffff) != NLMSG_ERROR || ack[2] != seq)
		fail("netlink(RTM_NEWROUTE)", EPROTO, detail);
	if (ack[4])
		fail("netlink(RTM_NEWROUTE)", -(long)(int)ack[4], detail);
}

/* wildcard returns a dual-stack socket of type typ bound to [::]:port. */
static long wildcard(int typ, u32 port, const char *what)
{
	char d[64];
	struct {
		u16 family, port;
		u32 flowinfo;
		u8 addr[16];
		u32 scope;
	} sin6;
	int off = 0;
	long fd, e;

	fd = check(sys3(NR_socket, AF_INET6, typ | SOCK_CLOEXEC, 0), "socket", what);
	check(sys6(NR_setsockopt, fd, IPPROTO_IPV6, IPV6_V6ONLY, (long)&off, sizeof off, 0),
	      "setsockopt(IPV6_V6ONLY)", what);
	memset(&sin6, 0, sizeof sin6);
	sin6.family = AF_INET6;
	sin6.port = (u16)(port >> 8 | (port & 0xff) << 8);
	if ((e = sys3(NR_bind, fd, &sin6, sizeof sin6)) < 0)
		fail("bind", -e, portdetail(d, "[::]:", port, what));
	return fd;
}

/* net_step brings lo up in the new network namespace, listens on
 * 127.0.0.1:port (the proxy) and hands the listener to the caller over
 * sock (tag 'L'); with transparent ports, it first makes every address
 * local (two routes), then hands over a listener on [::]:P for each port
 * (tag 'T') and the resolver's UDP socket on [::]:53 (tag 'U'); then the
 * inbound pool, ns->pool TCP sockets neither bound nor connected (tag 'I');
 * then it closes sock: see internal/trampoline's netStep, transparentStep
 * and poolStep. */
static void net_step(struct netstep *ns)
{
	struct {
		u16 family, port;
		u8 addr[4], zero[8];
	} sin;
	char d[64];
	long l, e;
	int lo;
	u32 i;

	lo = loopback_up();
	if (ns->nports) {
		l = check(sys3(NR_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0), "socket", "(netlink route)");
		local_route(l, AF_INET, 1, lo, "local 0.0.0.0/0 dev lo");
		local_route(l, AF_INET6, 2, lo, "local ::/0 dev lo");
		sys3(NR_close, l, 0, 0);
	}

	l = check(sys3(NR_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket", "(egress listener)");
	memset(&sin, 0, sizeof sin);
	sin.family = AF_INET;
	sin.port = (u16)(ns->port >> 8 | (ns->port & 0xff) << 8);
	sin.addr[0] = 127;
	sin.addr[3] = 1;
	if ((e = sys3(NR_bind, l, &sin, sizeof sin)) < 0)
		fail("bind", -e, portdetail(d, "127.0.0.1:", ns->port, "(egress listener)"));
	check(sys3(NR_listen, l, LISTEN_QUEUE, 0), "listen", "(egress listener)");
	hand_over(ns->fd, l, 'L');

	for (i = 0; i < ns->nports; i++) {
		const u8 *b = ns->ports + 4 * (u64)i;
		l = wildcard(SOCK_STREAM, (u32)b[0] | (u32)b[1] << 8, "(egress listener)");
		check(sys3(NR_listen, l, LISTEN_QUEUE, 0), "listen", "(egress listener)");
		hand_over(ns->fd, l, 'T');
	}
	if (ns->nports)
		hand_over(ns->fd, wildcard(SOCK_DGRAM, RESOLVER_PORT, "(resolver socket)"), 'U');
	for (i = 0; i < ns->pool; i++) {
		l = check(sys3(NR_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket", "(inbound pool)");
		hand_over(ns->fd, l, 'I');
	}
	check(sys3(NR_close, ns->fd, 0, 0), "close", "(egress handoff socket)");
}

/* ns_step: the whole step, from the payload's namespace section. */
static void ns_step(struct rd *r)
{
	static char cwd[4096];
	struct rd ops;
	struct mount_op o;
	u64 st[32];
	long fd, n;
	int have_cwd;
	u32 nops, i;
	struct netstep net;
	u64 nsdev, nsino;

	ops = *r;
	ns_check(r, &net, &nsdev, &nsino);
	if (r->bad)
		fail("trampoline", 0, "invalid invocation (truncated payload or trailing bytes)");
	nops = count(&ops, 40);

	fd = check(sys3(NR_openat, AT_FDCWD, "/proc/self/ns/mnt", O_PATH | O_CLOEXEC), "stat", "/proc/self/ns/mnt");
	check(sys3(NR_fstat, fd, st, 0), "stat", "/proc/self/ns/mnt");
	sys3(NR_close, fd, 0, 0);
	if (st[0] == nsdev && st[1] == nsino)
		fail("namespace step", 0, "still in the caller's mount namespace (was cmd.SysProcAttr "
					  "replaced after WrapCommand?): refusing to mount");
	/* The working directory is looked up again after the mounts: the
	 * process entered it before them, on the mount that was there then
	 * (now read-only, or hidden under a private /tmp); by its path it
	 * names what the target will see. One getcwd cannot name (too long,
	 * removed) cannot be: fail closed. */
	n = sys3(NR_getcwd, cwd, sizeof cwd, 0);
	have_cwd = n > 1 && cwd[0] == '/';
	if (nops && !have_cwd)
		fail("getcwd", n < 0 ? -n : ENOENT, "(the working directory must be found again after the mounts)");
	for (i = 0; i < nops; i++) {
		if (mount_op(&ops, &o, 1) || ops.bad)
			fail("trampoline", 0, "invalid invocation (bad mount step)");
		apply_mount(&o);
	}
	for (i = 0; i < MAX_SLOTS; i++)
		if (slots[i])
			sys3(NR_close, slots[i] - 1, 0, 0);
	if (have_cwd && (n = sys3(NR_chdir, cwd, 0, 0)) < 0) {
		static const char after[] = " (the working directory, after the mounts)";
		u64 k = slen(cwd);
		if (k > sizeof pbuf - sizeof after)
			k = sizeof pbuf - sizeof after;
		memcpy(pbuf, cwd, k);
		memcpy(pbuf + k, after, sizeof after);
		fail("chdir", -n, pbuf);
	}
	if (net.fd >= 0)
		net_step(&net);
}

__attribute__((noreturn, used)) void start(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	const char *marker = 0, *v;
	u32 ruid, euid, suid, rgid, egid, sgid;
	u64 nchunks = 0, total = 0, i, j;
	u8 *raw = 0;
	long n, dec;
	struct rd r;
	char **env;
	u32 envc, nrules, nports, nfilters, nlimits, ncg, flags;
	int firstfd, ruleset;
	u64 nonce0, nonce1;
	struct ruleset_attr ra;

	/* 0. */
	check(sys3(NR_getresuid, &ruid, &euid, &suid), "getresuid", 0);
	check(sys3(NR_getresgid, &rgid, &egid, &sgid), "getresgid", 0);
	if (ruid != euid || rgid != egid)
		fail("trampoline", 0, "refusing to run in a set-user-ID or set-group-ID executable");

	/* 1. */
	for (i = 0; envp[i]; i++)
		if ((v = prefix(envp[i], MARKER)))
			marker = v;
	if (!marker) {
		msglen = 0;
		puts_("sandbox: started as a sandbox trampoline without its environment "
		      "(was cmd.Env replaced after WrapCommand?): refusing to run\n");
		sys3(NR_write, 2, msg, msglen);
		exit_(125);
	}
	if (marker[0] != '2' || marker[1] != ' ' || !marker[2])
		fail("trampoline", 0, "invalid invocation (unknown payload version)");
	for (v = marker + 2; *v; v++) {
		if (*v < '0' || *v > '9' || nchunks > 1024)
			fail("trampoline", 0, "invalid invocation (bad chunk count)");
		nchunks = nchunks * 10 + (u64)(*v - '0');
	}
	if (nchunks < 1 || nchunks > 1024)
		fail("trampoline", 0, "invalid invocation (bad chunk count)");
	/* Sizes first, then one buffer. */
	for (j = 0; j < 2; j++) {
		u64 off = 0;
		for (i = 0; i < nchunks; i++) {
			const char *c = 0;
			u64 k, len;
			char name[48] = CHUNK; /* then i in decimal, "=" */
			u64 t = 1;
			k = sizeof CHUNK - 1;
			while (i / t >= 10)
				t *= 10;
			for (; t; t /= 10)
				name[k++] = (char)('0' + i / t % 10);
			name[k++] = '=';
			name[k] = 0;
			for (k = 0; envp[k] && !c; k++)
				c = prefix(envp[k], name);
			if (!c)
				fail("trampoline", 0, "invalid invocation (payload chunk missing)");
			/* A lone chunk's length is the sum the first pass made:
			 * counted once (counting 25 KB of it takes two thirds
			 * of the time decoding them does). */
			len = j && nchunks == 1 ? total : slen(c);
			if (i + 1 < nchunks && len % 4)
				fail("trampoline", 0, "invalid invocation (payload chunk has a bad length)");
			if (!j) {
				total += len;
				continue;
			}
			if (nchunks == 1)
				raw = (u8 *)c;
			dec = b64(c, len, raw + off);
			if (dec < 0)
				fail("trampoline", 0, "invalid invocation (payload is not base64)");
			off += (u64)dec;
		}
		if (!j) {
			/* Decoded bytes, then the arena: every string copied
			 * with a NUL (at most the payload's size again, plus one
			 * per string) and the envp array (at most 8 bytes per 4
			 * payload bytes, plus one). */
			u64 d = (total / 4 * 3 + 3 + 7) & ~7UL;
			arenacap = (d + d / 4 + 1 + 2 * d + 8 + 64 + 7) & ~7UL;
			if (nchunks == 1) {
				/* Decoded where it is (see b64): the chunk's
				 * string is this process's own stack, already in
				 * memory, and serves nothing else. */
				arena = alloc(arenacap);
			} else {
				raw = alloc(d + arenacap);
				arena = (char *)raw + d;
			}
		} else {
			total = off;
		}
	}

	r.p = raw;
	r.end = raw + total;
	r.bad = 0;
	v = (const char *)take(&r, 4);
	if (!v || v[0] != 'S' || v[1] != 'B' || v[2] != 'X' || v[3] != '2')
		fail("trampoline", 0, "invalid invocation (bad payload magic)");
	v = str(&r);
	if (!v || v[0] != '/')
		fail("trampoline", 0, "invalid invocation (target path is not absolute)");
	target = v; /* only now: fail() prints it */
	envc = count(&r, 4);
	/* The envp array follows the target's path in the arena (8-aligned,
	 * so that the strings after it stay on as few pages as possible). */
	arenalen = (arenalen + 7) & ~7UL;
	if (arenacap - arenalen < 8 * ((u64)envc + 1))
		fail("trampoline", 0, "invalid invocation (environment too large)");
	env = (char **)(arena + arenalen);
	arenalen += 8 * ((u64)envc + 1);
	for (i = 0; i < envc; i++)
		env[i] = str(&r);
	env[envc] = 0;
	firstfd = (int)u32_(&r);
	errfd = (int)u32_(&r);
	if (r.bad || firstfd < 3 || (errfd != -1 && errfd != firstfd)) {
		errfd = -1;
		fail("trampoline", 0, "invalid invocation (bad descriptor layout)");
	}
	/* 2. The failure pipe first, so that it reports the rest. */
	if (errfd >= 0)
		check(sys3(NR_fcntl, errfd, F_SETFD, FD_CLOEXEC), "fcntl", "(failure pipe)");
	if (argc < 2 || !(v = prefix(argv[0], ARG0)) || *v)
		fail("trampoline", 0, "invalid invocation (argv[0] is not " ARG0
			 ": was cmd.Args replaced after WrapCommand?)");

	ra.fs = u64_(&r);
	ra.net = u64_(&r);
	ra.scoped = u64_(&r);
	/* The rules are read (and their paths copied) below, in step 3; the
	 * rest of the payload follows them. */
	{
		struct rd rules = r;
		nrules = count(&r, 36);
		for (i = 0; i < nrules; i++) {
			take(&r, 32);
			take(&r, u32_(&r));
		}
		nports = count(&r, 16);
		take(&r, 16 * (u64)nports);
		struct rd filters = r;
		nfilters = count(&r, 4);
		for (i = 0; i < nfilters; i++)
			take(&r, 8 * (u64)count(&r, 8));
		nonce0 = u64_(&r);
		nonce1 = u64_(&r);
		ncg = count(&r, 4);
		struct rd cgfds = r;
		take(&r, 4 * (u64)ncg);
		flags = u32_(&r);
		nlimits = count(&r, 20);
		struct rd limits = r;
		take(&r, 20 * (u64)nlimits);
		/* The namespace section, checked in full by ns_step before it
		 * performs anything; here only skipped. */
		struct rd nsr = r;
		if (flags & FLAG_NS) {
			struct netstep net;
			u64 nsdev, nsino;
			ns_check(&r, &net, &nsdev, &nsino);
		}
		if (r.bad || r.p != r.end)
			fail("trampoline", 0, "invalid invocation (truncated payload or trailing bytes)");
		if (flags & ~(u32)(FLAG_NS | FLAG_PROBE))
			fail("trampoline", 0, "invalid invocation (payload asks for a step this helper does not have)");

		for (i = 0; i < ncg; i++) {
			int cgfd = (int)u32_(&cgfds);
			/* Above the target's descriptors: execve closes it. */
			if (ncg > 8 || cgfd < firstfd || cgfd == errfd)
				fail("trampoline", 0, "invalid invocation (bad cgroup descriptor)");
			for (;;) {
				n = sys3(NR_write, cgfd, "0", 1);
				if (n == 1)
					break;
				if (n != -EINTR)
					fail("write", n < 0 ? -n : 0, "cgroup.procs");
			}
		}
		check(sys3(NR_close_range, firstfd, ~0U, CLOSE_RANGE_CLOEXEC), "close_range", 0);

		/* 2a. The namespace step; with FLAG_PROBE (the parent's
		 * availability probe) nothing else. */
		if (flags & FLAG_NS) {
			ns_step(&nsr);
			if (flags & FLAG_PROBE)
				exit_(0);
		}

		/* 3. Landlock. The ruleset and every O_PATH descriptor are
		 * close-on-exec: execve closes them. */
		ruleset = (int)check(sys3(NR_ll_create, &ra, sizeof ra, 0), "landlock_create_ruleset", 0);
		nrules = count(&rules, 36);
		for (i = 0; i < nrules; i++) {
			u64 dir = u64_(&rules), file = u64_(&rules);
			u64 dev = u64_(&rules), ino = u64_(&rules);
			const char *path = str(&rules);
			u64 st[32];
			struct path_beneath pb;
			long fd;
			if (!path || !path[0])
				fail("trampoline", 0, "invalid invocation (bad rule path)");
			do
				fd = sys3(NR_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC);
			while (fd == -EINTR);
			if (fd == -ENOENT || fd == -ENOTDIR)
				continue; /* gone since WrapCommand: less access */
			check(fd, "open", path);
			pb.fd = (int)fd;
			if (!dev && !ino && (dir & ~(u64)LL_FILE_RIGHTS) && file) {
				/* No identity to check (a default path): let
				 * Landlock tell a directory, saving an fstat per
				 * path. It refuses rights only a directory can have
				 * on anything else with EINVAL; the file's rights
				 * are then the ones that apply. (Any other EINVAL
				 * would leave the file rights on a directory: less
				 * access, never more.) */
				pb.allowed = dir;
				n = sys6(NR_ll_add, ruleset, LANDLOCK_RULE_PATH_BENEATH, (long)&pb, 0, 0, 0);
				if (n == -EINVAL) {
					pb.allowed = file;
					n = sys6(NR_ll_add, ruleset, LANDLOCK_RULE_PATH_BENEATH, (long)&pb, 0, 0, 0);
				}
				check(n, "landlock_add_rule", path);
				continue;
			}
			check(sys3(NR_fstat, fd, st, 0), "fstat", path);
			if ((dev || ino) && (st[0] != dev || st[1] != ino))
				continue; /* not the object the parent resolved */
			pb.allowed = (*(u32 *)((u8 *)st + ST_MODE_OFF) & S_IFMT) == S_IFDIR ? dir : file;
			if (!pb.allowed)
				continue; /* not what it was granted as */
			check(sys6(NR_ll_add, ruleset, LANDLOCK_RULE_PATH_BENEATH, (long)&pb, 0, 0, 0),
			      "landlock_add_rule", path);
		}
		nports = count(&rules, 16);
		for (i = 0; i < nports; i++) {
			struct net_port np;
			np.port = u64_(&rules);
			np.allowed = u64_(&rules);
			n = sys6(NR_ll_add, ruleset, LANDLOCK_RULE_NET_PORT, (long)&np, 0, 0, 0);
			if (n < 0) {
				char pd[32] = "port ";
				u64 k = 5, p = np.port, t = 1;
				while (p / t >= 10)
					t *= 10;
				for (; t && k < sizeof pd - 1; t /= 10)
					pd[k++] = (char)('0' + p / t % 10);
				pd[k] = 0;
				fail("landlock_add_rule", -n, pd);
			}
		}

		/* 4. */
		drop_caps();

		/* 5. */
		check(sys6(NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", 0);
		check(sys3(NR_ll_restrict, ruleset, 0, 0), "landlock_restrict_self", 0);
		/* The resource limits: after the rules' paths were opened (an
		 * OpenFiles limit below their number would stop step 3) and
		 * after the capabilities are gone, as the Go trampoline does, so
		 * that neither child half can raise a limit above the one it
		 * inherited (the parent asks for no more). */
		for (i = 0; i < nlimits; i++) {
			u32 res = u32_(&limits);
			struct rlimit rl;
			rl.cur = u64_(&limits);
			rl.max = u64_(&limits);
			check(sys6(NR_prlimit64, 0, res, (long)&rl, 0, 0, 0), "prlimit64", 0);
		}
		nfilters = count(&filters, 4);
		for (i = 0; i < nfilters; i++) {
			struct sock_fprog prog;
			u32 len = count(&filters, 8);
			prog.filter = take(&filters, 8 * (u64)len);
			prog.len = (u16)len;
			if (filters.bad || len == 0 || len > 4096)
				fail("seccomp", 0, "(a filter has a bad length)");
			check(sys3(NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog),
			      "seccomp(SECCOMP_SET_MODE_FILTER)", 0);
		}
		if (rules.bad)
			fail("trampoline", 0, "invalid invocation (bad rules)");
	}

	/* 6. */
	do
		n = sys6(NR_execve, (long)target, (long)(argv + 1), (long)env,
			 (long)nonce0, (long)nonce1, 0);
	while (n == -EINTR);
	fail("execve", -n, target);
}
