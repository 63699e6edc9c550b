// Seed 004's Endo plugin: a SandboxMaker whose describe(endowments)
// returns a Sandbox that runs programs confined to those endowments.
//
// The backend is this repository's `sandbox` command (Linux: Landlock,
// seccomp and namespaces; macOS: Seatbelt), found through the SANDBOX_BIN
// environment variable (the caplet's env first, then the process's) or
// else on PATH. The descriptor is checked and mapped on the Go side
// (sandbox.ParseEndowments, sandbox.Endowments.Config): `sandbox plan
// --endowments - --json` says what of it is enforced here, and
// `sandbox run --endowments - -- CMD ARGS` runs a program. What help()
// says about this machine comes from that plan, never from this file.
//
// Load it into an Endo daemon as an unconfined caplet (README.md):
//
//   endo make --UNCONFINED sandbox-plugin.js --powers @none --name sandbox-maker \
//     -E SANDBOX_BIN=/usr/local/bin/sandbox

import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { M, mustMatch } from '@endo/patterns';
import { makeExo } from '@endo/exo';

// The descriptor (sandbox.Endowments on the Go side). The shapes check
// types and names, and refuse unknown fields (the rest pattern {}: by
// default M.splitRecord lets any other property through, and a misspelt
// restriction must not become none); the Go side checks the rest
// (absolute paths without "..", that they exist, links, hosts, ports).
//
// A failed guard's message redacts the values it names (SES: "mode: (a
// string) - Must match one of (a string)"), which tells a model nothing
// it can act on. So describe() and run() take any record at the
// interface and check it in their bodies: first with messages that name
// the field, the value and what to write (the Go side's for the
// descriptor, checkRunOptions for run's options), then with mustMatch
// against these shapes, which must agree.
export const FsGrantShape = M.splitRecord(
  { path: M.string(), mode: M.or('read', 'read-write') },
  { mountAt: M.string() },
  {},
);
export const PortShape = M.and(M.number(), M.gte(1), M.lte(65535));
export const NetShape = M.splitRecord(
  {},
  {
    outbound: M.boolean(),
    inbound: M.boolean(),
    allowHosts: M.arrayOf(M.string()),
    allowPorts: M.arrayOf(PortShape),
  },
  {},
);
export const ExecShape = M.splitRecord({}, { allowPaths: M.arrayOf(M.string()) }, {});
export const EndowmentsShape = M.splitRecord(
  {},
  {
    version: 1,
    fs: M.arrayOf(FsGrantShape),
    net: NetShape,
    exec: ExecShape,
    env: M.recordOf(M.string(), M.string()),
    devices: M.arrayOf(M.string()),
  },
  {},
);

const MAX_TIMEOUT_MS = 86_400_000;
const NO_OPTIONS = harden({});

// Run options: cwd (absolute, granted) and timeout in milliseconds
// (default 30000, at most a day).
export const RunOptionsShape = M.splitRecord(
  {},
  { cwd: M.string(), timeout: M.and(M.number(), M.gt(0), M.lte(MAX_TIMEOUT_MS)) },
  {},
);

// What run() returns (the CLI's JSON result). The streams are bounded by
// the CLI (maxOutput, 4 MiB each): M.string()'s default bound (100,000)
// would refuse a longer output, so theirs is twice the CLI's.
const OutputShape = M.string(harden({ stringLengthLimit: 8 * 1024 * 1024 }));
export const RunResultShape = M.splitRecord(
  { exitCode: M.number(), stdout: OutputShape, stderr: OutputShape },
  {
    stdoutTruncated: M.boolean(),
    stderrTruncated: M.boolean(),
    stdoutBinary: M.boolean(),
    stderrBinary: M.boolean(),
    maxOutput: M.number(),
    timedOut: M.boolean(),
    signal: M.string(),
    error: M.string(),
    durationMs: M.number(),
    limitExceeded: M.string(),
    deniedRequests: M.arrayOf(M.record()),
    findings: M.arrayOf(M.record()),
  },
);

export const SandboxI = M.interface('Sandbox', {
  // opts: RunOptionsShape, checked in the body (see above).
  run: M.callWhen(M.string(), M.arrayOf(M.string()))
    .optional(M.record())
    .returns(RunResultShape),
  getEndowments: M.call().returns(EndowmentsShape),
  help: M.call().optional(M.string()).returns(M.string()),
});

export const SandboxMakerI = M.interface('SandboxMaker', {
  // endowments: EndowmentsShape, checked in the body (see above).
  describe: M.callWhen(M.record()).returns(M.remotable('Sandbox')),
  help: M.call().optional(M.string()).returns(M.string()),
});

/**
 * Finds the sandbox command: SANDBOX_BIN from the caplet's env, then from
 * this process's environment, then `sandbox` on PATH.
 *
 * @param {Record<string, string>} [env]
 */
export const findSandboxBin = (env = {}) => {
  const isExec = p => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  const named = env.SANDBOX_BIN || process.env.SANDBOX_BIN;
  if (named) {
    if (!isAbsolute(named) || !isExec(named)) {
      throw Error(`SANDBOX_BIN ${JSON.stringify(named)} is not an absolute path to an executable file`);
    }
    return named;
  }
  for (const dir of (process.env.PATH || '').split(delimiter)) {
    if (dir && isAbsolute(dir) && isExec(join(dir, 'sandbox'))) {
      return join(dir, 'sandbox');
    }
  }
  throw Error('the sandbox command was not found: set SANDBOX_BIN to its absolute path, or put it on PATH (go build -o sandbox ./cmd/sandbox)');
};

/**
 * Runs the sandbox command with input on its stdin; resolves to
 * { code, stdout, stderr }. killAfterMs, when set, kills the command
 * itself (which kills its program) if it outlives its own timeout.
 *
 * @param {string} bin
 * @param {string[]} args
 * @param {string} input
 * @param {number} [killAfterMs]
 */
const invoke = (bin, args, input, killAfterMs) =>
  new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', b => out.push(b));
    child.stderr.on('data', b => err.push(b));
    const timer = killAfterMs ? setTimeout(() => child.kill('SIGKILL'), killAfterMs) : undefined;
    child.on('error', e => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? -1,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.on('error', () => {}); // a command that exits early
    child.stdin.end(input);
  });

/** The CLI's refusal, as an Error whose message says what to change. */
const refused = (method, r) =>
  Error(`${method}: ${r.stderr.trim().replace(/^sandbox (run|plan): /, '') || `the sandbox command failed (exit ${r.code})`}; call help() for the descriptor's format`);

/** Asks the sandbox command for the plan of a descriptor. */
const planOf = async (bin, descriptor) => {
  const r = await invoke(bin, ['plan', '--endowments', '-', '--json'], JSON.stringify(descriptor));
  if (r.code !== 0) {
    throw refused('describe', r);
  }
  return JSON.parse(r.stdout);
};

/** What the plan does not enforce of these endowments, in one line. */
const notEnforcedLine = rep =>
  rep.notEnforced.length === 0
    ? 'Everything these endowments ask for is enforced here.'
    : `Not enforced here (the reasons are above): ${rep.notEnforced.map(f => f.feature).join(', ')}; getEndowments() leaves out every restriction among them that the descriptor has a field for.`;

const descriptorHelp = maxOutput => `The endowments descriptor (JSON; every field optional; whatever it does not grant is denied):
  version: 1                      (absent means 1; any other version is refused)
  fs: [{path, mode, mountAt?}]    path: absolute, without "..", existing; mode: "read" (read and list) or
                                  "read-write" (also create, change, delete inside); mountAt: show the path
                                  at this absolute path instead (e.g. "/workspace"), refused where this
                                  machine cannot make it. A symbolic link on the way that leads outside
                                  the declared paths is refused: declare where it leads.
  net: {outbound?, inbound?, allowHosts?, allowPorts?}
                                  outbound alone: TCP to any host and port. allowHosts (DNS names,
                                  "localhost", IP addresses, CIDR ranges such as "10.0.0.0/8") and
                                  allowPorts (1-65535) narrow it: every host on every port; no ports means
                                  any port. inbound: the program may listen on allowPorts (which must be
                                  listed; the same list narrows outbound, so inbound with "localhost" in
                                  allowHosts is refused), reachable from the caller at 127.0.0.1:PORT.
                                  No net: no network at all.
  exec: {allowPaths: [path]}      the programs (files, or directories of them) that may run; a non-empty
                                  list also lets the program create processes (fork), as a shell needs.
                                  The command run() starts must be one of them.
  env: {NAME: value}              the program's whole environment: nothing else is inherited (the sandbox
                                  adds TMPDIR/TMP/TEMP, a private HOME when none is given, and proxy
                                  variables when allowHosts is enforced through a proxy).
  devices: ["camera" | "microphone" | "/dev/..."]
                                  camera and microphone exist on macOS only (refused elsewhere); a device
                                  node's path is granted read-write.
Example: {"fs": [{"path": "/home/me/project", "mode": "read-write", "mountAt": "/workspace"}],
          "exec": {"allowPaths": ["/usr/bin", "/bin"]}, "env": {"PATH": "/usr/bin:/bin"},
          "net": {"outbound": true, "allowHosts": ["registry.npmjs.org"], "allowPorts": [443]}}
Output: each of stdout and stderr keeps its first ${maxOutput} bytes (stdoutTruncated/stderrTruncated say when more was written).`;

/** The Sandbox's help, by method and whole. */
const sandboxHelp = rep => {
  const methods = {
    run: `run(command: string, args: string[], opts?: {cwd?: string, timeout?: number}) -> Promise<RunResult>
  Runs one program confined to this sandbox's endowments and waits for it. No shell: for one, run
  "sh" with ["-c", "..."] (sh must be in exec.allowPaths).
  command: a name, looked up in env.PATH (or, when env has no PATH, among exec.allowPaths), or an
           absolute path; it must lie inside exec.allowPaths.
  opts.cwd: absolute working directory (the endowments must grant it); default: the plugin's own.
  opts.timeout: milliseconds (default ${rep.defaultTimeoutMs}); then the program and every process it started are killed.
  RunResult: {exitCode: number (-1 when killed, 127 not found, 126 not executable), stdout: string,
    stderr: string, stdoutTruncated: boolean, stderrTruncated: boolean (each stream keeps its first
    ${rep.maxOutput} bytes), timedOut: boolean, signal?: string, error?: string, durationMs: number,
    deniedRequests?: [...] (network requests refused by the egress proxy), findings?: [...]}
  A denied operation shows in the program's own output as "Permission denied" (EACCES/EPERM), or
  "Read-only file system" (EROFS) for a read-only path; retrying does not help.
  Example: await E(sandbox).run("echo", ["hello"])  ->  {exitCode: 0, stdout: "hello\\n", stderr: "", ...}`,
    getEndowments: `getEndowments() -> Endowments
  The effective endowments: the descriptor as checked (paths cleaned, version set), with every
  restriction this machine does not enforce removed, so it reads as wide as the program's real reach
  (e.g. allowHosts dropped where host names are not enforced). Same format as describe() takes.`,
    help: `help(method?: string) -> string
  This text, or the part about one method ("run", "getEndowments", "help").`,
  };
  const here = `What a program run here can and cannot do (generated from the plan on ${rep.plan.platform}, ${rep.plan.mechanism}):
${rep.describe}
${notEnforcedLine(rep)}`;
  const whole = `Sandbox: runs programs confined to fixed endowments. It cannot change them or make another Sandbox.

Methods:
${Object.values(methods).join('\n\n')}

${here}`;
  return method => {
    if (method === undefined) return whole;
    if (Object.hasOwn(methods, method)) return methods[method];
    return `no method ${JSON.stringify(method)}: the methods are run, getEndowments, help`;
  };
};

/**
 * Checks run()'s options with messages that say what to write.
 *
 * @param {Record<string, unknown>} opts
 */
const checkRunOptions = opts => {
  for (const k of Object.keys(opts)) {
    if (k !== 'cwd' && k !== 'timeout') {
      throw Error(`run: unknown option ${JSON.stringify(k)}: the options are cwd and timeout (the endowments were fixed by describe())`);
    }
  }
  const { cwd, timeout } = opts;
  if (cwd !== undefined && (typeof cwd !== 'string' || !cwd.startsWith('/'))) {
    throw Error(`run: opts.cwd ${JSON.stringify(cwd)}: want an absolute path the endowments grant, e.g. "/workspace"`);
  }
  if (timeout !== undefined && !(typeof timeout === 'number' && timeout > 0 && timeout <= MAX_TIMEOUT_MS)) {
    throw Error(`run: opts.timeout ${JSON.stringify(timeout)}: want milliseconds, more than 0 and at most ${MAX_TIMEOUT_MS}, e.g. 30000`);
  }
  mustMatch(opts, RunOptionsShape);
};

/**
 * Makes a Sandbox for a checked descriptor and its plan.
 *
 * @param {string} bin
 * @param {any} rep  the CLI's plan report
 */
const makeSandbox = (bin, rep) => {
  const descriptor = JSON.stringify(rep.endowments);
  const effective = harden(rep.effective);
  const help = sandboxHelp(rep);
  return makeExo('Sandbox', SandboxI, {
    async run(command, args, opts = NO_OPTIONS) {
      checkRunOptions(opts);
      const flags = ['run', '--endowments', '-'];
      if (opts.cwd !== undefined) flags.push('--cwd', opts.cwd);
      const timeout = opts.timeout ?? rep.defaultTimeoutMs;
      flags.push('--timeout', `${timeout}ms`, '--', command, ...args);
      // The command kills the program at the timeout; this kills the
      // command if it has not returned well after.
      const r = await invoke(bin, flags, descriptor, timeout + 30_000);
      if (r.code !== 0) {
        throw refused('run', r);
      }
      return harden(JSON.parse(r.stdout));
    },
    getEndowments() {
      return effective;
    },
    help(method) {
      return help(method);
    },
  });
};

/**
 * The plugin's entry point, as Endo's makeUnconfined calls it.
 *
 * @param {unknown} _powers   not used: the maker needs no powers of the daemon
 * @param {unknown} _context
 * @param {{env?: Record<string, string>}} [options]  env.SANDBOX_BIN names the sandbox command
 */
export const make = async (_powers, _context, options = {}) => {
  const bin = findSandboxBin(options.env);
  // What this machine enforces of a descriptor granting nothing: the
  // platform part of the maker's help.
  const base = await planOf(bin, {});
  const platform = base.plan.features
    .filter(f => f.scope !== 'apply_self')
    .map(f => `- ${f.feature}: ${f.enforced ? 'enforced' : 'NOT enforced'}: ${f.detail}`)
    .join('\n');
  const methods = {
    describe: `describe(endowments: Endowments) -> Promise<Sandbox>
  Checks the descriptor and returns a Sandbox confined to it. A malformed descriptor is refused with
  an error naming the field and what to write instead (e.g. fs[0].mode "rw": want "read" or
  "read-write"); a grant this machine cannot make (mountAt where no mount namespace is available,
  "camera" outside macOS) is refused with the reason.
  Example: const sb = await E(maker).describe({fs: [{path: "/home/me/project", mode: "read"}],
             exec: {allowPaths: ["/usr/bin"]}, env: {PATH: "/usr/bin"}});
           await E(sb).run("ls", ["/home/me/project"]);
  The Sandbox has run(command, args, opts?), getEndowments() and help(); call its help() for what
  it enforces here.

${descriptorHelp(base.maxOutput)}`,
    help: `help(method?: string) -> string
  This text, or the part about one method ("describe", "help").`,
  };
  const whole = `SandboxMaker: makes Sandboxes that run programs confined by the operating system's own
mechanisms (${base.plan.mechanism} on ${base.plan.platform}), through the sandbox command at ${bin}.

Methods:
${Object.values(methods).join('\n\n')}

This machine, for a descriptor that grants nothing (generated from the plan):
${platform}`;
  return makeExo('SandboxMaker', SandboxMakerI, {
    async describe(endowments) {
      const rep = await planOf(bin, endowments);
      mustMatch(endowments, EndowmentsShape);
      return makeSandbox(bin, rep);
    },
    help(method) {
      if (method === undefined) return whole;
      if (Object.hasOwn(methods, method)) return methods[method];
      return `no method ${JSON.stringify(method)}: the methods are describe, help`;
    },
  });
};
