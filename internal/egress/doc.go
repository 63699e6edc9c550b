// Package egress is the network egress proxy a sandbox's caller serves, so
// that Config.AllowedTCPConnect can name hosts and not only ports (issue
// 19). Landlock filters TCP ports, not hosts: "github.com:443" alone lets a
// program reach every host on port 443. With this package the program runs
// in a network namespace of its own, with nothing but a loopback interface,
// and reaches the outside only through a proxy that listens inside that
// namespace but is served by the caller, outside the sandbox, where each
// requested host:port is checked against the allowlist.
//
// WrapCommand and Run use it on Linux when Config.AllowedTCPConnect names
// hosts only (no "*:PORT" entry) and network namespaces are available: see
// internal/linux's egress_linux.go (the caller's half) and
// internal/trampoline's net_linux.go (the child's half, in the Go
// trampoline's namespace step).
//
// # What the proxy enforces
//
// One [Proxy] per sandbox, each with its own [Allowlist], serving one or
// more listeners ([Proxy.Serve]). It speaks:
//
//   - HTTP CONNECT host:port (https, and any TCP protocol a client tunnels);
//   - absolute-URI HTTP requests (GET http://host/..., any method, bodies,
//     chunked, keep-alive between requests; the Host header is the checked
//     URI's, so a client cannot ask an allowed server for another virtual
//     host); https:// absolute URIs are refused: they would make the proxy
//     the TLS client;
//   - SOCKS5 without authentication, CONNECT only, with host names (ATYP 3,
//     resolved by the proxy: clients use socks5h://), IPv4 and IPv6.
//
// A request is allowed when its host and port match a rule exactly (see
// [NewAllowlist] for names, "*.example.com" wildcards, IP literals, address
// ranges and "localhost"). The proxy then resolves an allowed name itself, in the
// caller's network, keeps only the addresses [Allowlist.AddrAllowed] allows
// (a name never reaches a loopback, private, CGNAT, link-local or
// unspecified address, nor any address of the caller's own interfaces,
// unless a rule names that address or localhost: no DNS rebinding to the
// caller's own or internal services), connects to the
// checked address (never to the name again), and relays both ways with
// half-close.
//
// Everything else is refused: HTTP 403 (400 for requests that are not
// proxy requests) with the reason in the [DeniedHeader] header
// ("X-Sandbox-Denied: not-allowed"), SOCKS5 reply 0x02 (connection not
// allowed by ruleset; 0x07 for BIND and UDP ASSOCIATE), and every refusal
// recorded with host, port, reason and time: [Proxy.Denied], or
// Options.OnDeny as it happens. An allowed destination that cannot be
// resolved or reached gets 502 or the matching SOCKS code and is not a
// refusal.
//
// What it does not enforce: the content of a CONNECT tunnel is opaque (TLS
// to an allowed host may carry a different SNI or Host inside, so a CDN
// that serves many sites behind one allowed name can be fronted through);
// UDP does not pass at all, except DNS queries to the caller's resolver on
// the transparent path (no QUIC/HTTP/3); a program that ignores the proxy
// variables is served by the transparent path where it is in force, and
// otherwise cannot connect anywhere, which is safe but may surprise.
//
// # Resource bounds
//
// The program inside is hostile, and what the proxy spends is the
// caller's: outside the program's memory and CPU limits. So every request
// head (HTTP request line and header fields, SOCKS5 greeting and request)
// is read whole, as bytes, before net/http parses it, under these bounds
// (the defaults; [Options] sets others):
//
//   - MaxHeaderBytes, 32 KiB per head, and MaxHeaderFields, 100 header
//     lines: past either, HTTP 431 and [ReasonTooLarge]. (net/http's own
//     1 MiB, parsed as it arrives, let a head of tiny fields that never
//     ends hold ~14 MiB of the caller's heap per connection.)
//   - HandshakeTimeout, 10 s for a whole head: a head begun and not ended
//     gets HTTP 408 and [ReasonTimeout]; a connection that sent nothing is
//     closed unrecorded.
//   - MaxConns, 128 connections served at once (relays included; each
//     costs two descriptors): up to [RefusingConns] more are accepted only
//     to be refused, HTTP 503 or SOCKS5 general failure with [ReasonBusy];
//     past those the proxy stops accepting until one ends.
//   - MaxBufferedBytes, 1 MiB of heads held at once for the whole sandbox
//     ([Budget]): a head that would need more gets HTTP 503 or SOCKS5
//     general failure, [ReasonBusy].
//   - MaxDenials, 1000 refusals kept.
//
// Together: a sandbox costs its caller a few MiB at most, however it
// floods (TestProxyHeadFloodBounded; the sandbox package's
// TestEgressHeaderFlood measures it from a program under a 64 MiB limit).
// Not bounded: the CPU a program makes the caller spend by connecting,
// being refused and connecting again (each costs the program a connect
// too), and the bytes of an allowed relay or response, which pass through
// fixed buffers or the kernel (splice). Responses from an allowed
// destination are read with net/http's own limits: the destination is one
// the Config trusts.
//
// [Proxy.Close] stops the listeners, ends every connection and relay, and
// returns when every goroutine it started has returned (tested by counting
// goroutines and socket descriptors).
//
// # Which programs use the proxy
//
// [Env] makes the variables the target gets: HTTP_PROXY and HTTPS_PROXY
// (http://127.0.0.1:PORT), ALL_PROXY (socks5h://), NO_PROXY, each in both
// cases, and NODE_USE_ENV_PROXY=1.
//
//   - curl and everything on libcurl: http_proxy (lower case only),
//     HTTPS_PROXY, ALL_PROXY (socks5h:// included), NO_PROXY.
//   - git over http(s): libcurl's variables, or http.proxy. git over ssh or
//     git:// does not use them (ssh has no proxy variable): it cannot
//     connect.
//   - pip, Python requests and urllib: HTTP_PROXY, HTTPS_PROXY, NO_PROXY in
//     either case; https goes through CONNECT. SOCKS in requests needs
//     PySocks, which is why HTTPS_PROXY is an http:// URL.
//   - npm: HTTP_PROXY, HTTPS_PROXY, NO_PROXY (its proxy settings default to
//     them).
//   - go (module downloads) and Go programs on net/http's default
//     transport: HTTP_PROXY, HTTPS_PROXY, NO_PROXY, not ALL_PROXY; Go never
//     proxies requests to localhost or loopback addresses.
//   - Node.js: built-in fetch (and, in newer releases, http/https) only
//     with NODE_USE_ENV_PROXY=1 or --use-env-proxy; older releases ignore the
//     variables.
//   - wget: http_proxy, https_proxy, no_proxy.
//
// A program that ignores them (raw sockets, ssh, most databases' clients, a
// Go program that dials directly) is served by the transparent path
// (below); where that path is not in force it finds an empty namespace:
// connecting to any address outside it fails (ENETUNREACH), and 127.0.0.1
// is the namespace's own loopback, where nothing of the caller's listens.
//
// # The namespace, and what the child half must do
//
// The pieces here ([LoopbackUp], [SocketPair], [SendListener],
// [ReceiveListener]) are prototyped in Go by this package's tests (a
// re-executed child born in the namespaces); the child half (the Go
// trampoline's namespace step, with raw system calls: netStep in
// internal/trampoline) does the same, in this order, before anything of
// the target runs:
//
//  1. Parent: SocketPair; pass the child's end as an inherited descriptor;
//     choose the proxy port (fixed, so that the target's environment,
//     made from [Env] before the start, can name it).
//  2. Child: enter a new network namespace: unshare(CLONE_NEWNET) as root,
//     or CLONE_NEWUSER|CLONE_NEWNET with a uid/gid map (setgroups "deny")
//     unprivileged; the user namespace must own the network namespace, and
//     the child must be uid 0 in it, for step 3.
//  3. Child: bring lo up (LoopbackUp: SIOCGIFFLAGS, SIOCSIFFLAGS |IFF_UP on
//     an AF_INET datagram socket). A new namespace has lo down.
//  4. Child: socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC), bind 127.0.0.1:PORT,
//     listen. (The same for [::1]:PORT where IPv6 is up, optionally.)
//  5. Child: sendmsg the listener with SCM_RIGHTS (SendListener: one data
//     byte 'L', one descriptor), then close the listener and its end of the
//     socket pair. The target must not hold either.
//  6. Child: no acknowledgement is needed: connections queue in the
//     listener's backlog from listen() on, whether the parent accepts yet or
//     not. Continue with the rest of the sandbox (Landlock, which must grant
//     connect to PORT; seccomp, which must allow AF_INET TCP sockets), then
//     execve the target with the [Env] variables.
//  7. Parent: close the child's end after start; ReceiveListener (it
//     refuses anything but one listening TCP socket bound to loopback, and
//     returns when the child dies before sending); Serve; Close when the
//     process tree has exited. The namespace lives as long as the listener
//     does, so Close also ends it.
//
// Nothing of ours runs inside after the target starts: the listener is a
// kernel object in the namespace; everything behind it runs in the caller.
//
// # The transparent path
//
// Proxy variables reach only the clients that read them (above), and some
// never use them for the destinations that matter most (Go's net/http and
// grpc-go never proxy loopback; Node 20's fetch ignores them). So under
// WrapCommand and Run the child half also makes the namespace's every
// address local (local 0.0.0.0/0 and ::/0 through lo, by rtnetlink), one
// dual-stack listener on [::]:PORT per port of the host entries and a UDP
// socket on [::]:53, and hands them to the caller after the proxy's
// listener (tags 'T' and 'U': [ReceiveSockets]). A connect() to any
// IP:PORT of an allowed port then lands on a listener the caller holds,
// and the accepted socket's local address is what the program dialled:
// [Proxy.ServeTransparent] relays it when an IP literal rule names it,
// when it is a loopback address on a localhost rule's port, or when an
// allowed name on that port resolves to it in the caller; the relay then
// dials the rule, with the same rebinding filter as a proxy request. Every
// other connection is reset (its connect() has succeeded: the first read
// or write fails with ECONNRESET) and reported (Protocol "tcp"). A
// connect() to a port not on the list never gets here: Landlock refuses it
// in the kernel (EACCES), and nothing is recorded.
//
// [Proxy.ServeDNS] answers the program's own resolver (glibc, musl, Go's,
// c-ares; the program's /etc/resolv.conf names 127.0.0.1, a file the
// sandbox generates and the mount layer binds): A and AAAA for the names
// of the rules with the caller's own resolution of them, filtered as the
// relay filters (so an answered address is one the relay recognises as
// that name's), NXDOMAIN and a Denial (Protocol "dns") for every other
// name. The answers are real addresses, not synthetic ones that the relay
// maps back: names the program resolves itself (/etc/hosts: localhost)
// dial real addresses anyway, so the relay must recognise those, and one
// mechanism is easier to check than two. The relay dials the name, not the
// dialled address, so "reaches exactly that name's host and port" holds
// even when the program keeps an answer past its TTL (remembered for
// addrMemory) or reaches localhost by its other loopback address.
//
// Bounds: the transparent connections count against Options.MaxConns with
// the proxy's own; each relays through two 32 KiB buffers; an address no
// name is known to resolve to makes the caller look each candidate name
// up at most once per relookupAfter; at most maxDNSInflight queries are
// resolved at once (more are dropped, and the program's resolver retries);
// maxAddrsPerName addresses are remembered per name.
//
// The proxy is kept beside it, with its variables: a proxy-aware client
// gets the same allowlist either way, the proxy's report names the host
// the client asked for (the relay sees only an address), and callers
// written against [Proxy] and the sandbox's Egress.Addr keep working. What
// it costs is one more port open to the program and the proxy's parser
// facing it (bounded: see [Options]). Where the transparent half cannot
// run (a kernel without IPv6, say), the proxy alone serves, as before.
//
// # Inbound
//
// A port the program listens on inside the namespace is reached from the
// caller's side through a TCP socket of that namespace, connected there to
// 127.0.0.1:PORT, one per connection ([Proxy.ServeInbound]). A root caller
// makes each with setns on a locked thread. A caller that is not root
// cannot enter the namespace (setns asks for CAP_SYS_ADMIN in the caller's
// own user namespace as well as the namespace's), so the child half makes
// a pool of AF_INET TCP sockets there before the target starts, neither
// bound nor connected, and hands them over last (tag 'I': [ReceiveSockets]
// checks each); [Proxy.ServeInboundPool] spends one per connection, and
// resets and reports (ReasonInboundPool) a connection that finds none.
//
// # Any-port rules
//
// A rule with AnyPort ("api.example.com:*", "10.1.2.3:*", "localhost:*")
// allows its host on every port, host-exact: the proxy serves it on any
// port (HTTP CONNECT, absolute-URI HTTP, SOCKS5), with the same rebinding
// filter (an any-port IP literal or "localhost:*" names that address on
// every port). The transparent path serves it only where a connection
// arrives: on the listeners of the ports other rules list, since the
// child half makes one listener per port before the program starts; a
// direct connection to any other port never reaches the caller (Landlock
// refuses it in the namespace). The resolver answers an any-port name
// (addrAllowedAnyPort), so that direct clients get a real address and
// fail at connect, not at lookup. "*:*" is no rule here: NewAllowlist
// refuses it.
//
// # Address ranges
//
// A range rule ("10.0.0.0/8:443", "fd00::/8" on any port) allows every
// address in it, host-exact by address: an IP literal in a proxy request
// (HTTP CONNECT, absolute-URI HTTP, SOCKS5 ATYP 1 and 4) and the
// destination of a direct connection on the transparent path (the
// namespace's routes make every address local, so a connect() to any
// address in the range on a listed port lands on that port's listener,
// and the relay dials exactly the address dialled). It never allows a
// name, whatever the name resolves to, and the resolver answers no name
// for it: a DNS answer is the name owner's (or an attacker's) to choose,
// so matching names by their answers would let anyone who controls a
// zone point a name into the range. An any-port range is served as any
// other any-port rule is (directly only on the listed ports). Addresses
// are unmapped first: "::ffff:10.1.2.3" is 10.1.2.3, inside 10.0.0.0/8
// and never inside an IPv6 range.
//
// # For the integration
//
// Rules come from sandbox.ParseEndpoint's Endpoints ({Host, Port, AnyPort}); port
// rules ("*:443") are Landlock's business and do not reach the proxy
// ([Allowlist.PortOnly] lists them). A Config that mixes them with host
// entries runs without the namespace (a "*:443" rule could be honoured
// inside it only by letting the proxy serve any host on 443): every entry
// keeps Landlock's port rule, and PlanFor reports the host names as not
// enforced, with that reason.
// A "localhost" or loopback rule means the caller's loopback, reached
// through the proxy (Env leaves NO_PROXY empty then). Wildcards are
// accepted here but still refused by ParseEndpoint.
package egress
