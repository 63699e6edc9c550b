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
 *  3. Landlock: create the ruleset; open each rule's path (O_PATH, following
 *     symlinks as they are now), skip it when it is gone, when it is not the
 *     object the parent resolved (device and inode, when the parent recorded
 *     them), or when it is not what it was granted as; add the rest (a
 *     directory's rights if it is one, else a file's; for a path with no
 *     recorded identity landlock_add_rule's EINVAL tells, not fstat).
 *     Then set the payload's resource limits (after the opens: an
 *     OpenFiles limit may be lower than the number of rules).
 *  4. Drop every capability: the bounding set (when CAP_SETPCAP allows),
 *     the ambient set, then permitted, effective and inheritable; check with
 *     capget that nothing is left.
 *  5. no_new_privs; landlock_restrict_self; load each seccomp program.
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
	NR_write = 1, NR_fstat = 5, NR_mmap = 9, NR_execve = 59, NR_fcntl = 72,
	NR_getresuid = 118, NR_getresgid = 120, NR_capget = 125,
	NR_capset = 126, NR_prctl = 157, NR_exit_group = 231,
	NR_openat = 257, NR_prlimit64 = 302, NR_seccomp = 317,
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
	NR_fcntl = 25, NR_openat = 56, NR_write = 64, NR_fstat = 80,
	NR_capget = 90, NR_capset = 91, NR_exit_group = 94,
	NR_getresuid = 148, NR_getresgid = 150, NR_prctl = 167,
	NR_execve = 221, NR_mmap = 222, NR_prlimit64 = 261, NR_seccomp = 277,
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
enum { NR_close_range = 436, NR_ll_create = 444, NR_ll_add = 445, NR_ll_restrict = 446 };

#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

enum {
	ENOENT = 2, EINTR = 4, ENOTDIR = 20, EINVAL = 22,
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
	case 20: return "not a directory";
	case 21: return "is a directory";
	case 22: return "invalid argument";
	case 24: return "too many open files";
	case 26: return "text file busy";
	case 36: return "file name too long";
	case 38: return "function not implemented";
	case 40: return "too many levels of symbolic links";
	case 95: return "operation not supported";
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

static int b64val(u8 c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* b64 decodes unpadded standard base64 from s (n chars) to out; returns
 * the number of bytes written, or -1. out may be s: each group of four
 * characters is read before its three bytes are written, at or before where
 * the group began. */
static long b64(const char *s, u64 n, u8 *out)
{
	u64 i, o = 0;
	if (n % 4 == 1)
		return -1;
	for (i = 0; i < n; i += 4) {
		u32 v = 0;
		u64 k, m = n - i < 4 ? n - i : 4;
		for (k = 0; k < 4; k++) {
			int d = k < m ? b64val((u8)s[i + k]) : 0;
			if (d < 0)
				return -1;
			v = v << 6 | (u32)d;
		}
		out[o++] = (u8)(v >> 16);
		if (m > 2)
			out[o++] = (u8)(v >> 8);
		if (m > 3)
			out[o++] = (u8)v;
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
			len = slen(c);
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
		if (r.bad || r.p != r.end)
			fail("trampoline", 0, "invalid invocation (truncated payload or trailing bytes)");
		if (flags)
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

		/* The resource limits, now that the rules' paths were opened
		 * (an OpenFiles limit below their number would stop step 3). */
		for (i = 0; i < nlimits; i++) {
			u32 res = u32_(&limits);
			struct rlimit rl;
			rl.cur = u64_(&limits);
			rl.max = u64_(&limits);
			check(sys6(NR_prlimit64, 0, res, (long)&rl, 0, 0, 0), "prlimit64", 0);
		}

		/* 4. */
		drop_caps();

		/* 5. */
		check(sys6(NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)", 0);
		check(sys3(NR_ll_restrict, ruleset, 0, 0), "landlock_restrict_self", 0);
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
