// Seed 004's test plan for the plugin, under real lockdown (@endo/init),
// against the sandbox command named by SANDBOX_BIN (endo_test.go builds
// it and runs these). Only loopback addresses are ever dialled.

import '@endo/init';

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { test, before, after } from 'node:test';
import { passStyleOf } from '@endo/pass-style';

import { make, findSandboxBin } from '../sandbox-plugin.js';

let bin;
try {
  bin = findSandboxBin();
} catch (e) {
  bin = undefined;
  console.log(`# skipping: ${e.message}`);
}
const skip = bin ? false : 'no sandbox command: set SANDBOX_BIN';

// Outside /tmp: a run's /tmp is private, where a file would be missing
// rather than denied. ENDO_PLUGIN_TEST_DIR names another directory (the
// run as nobody's, since /var/tmp need not be writable by all).
const base = process.env.ENDO_PLUGIN_TEST_DIR || '/var/tmp';
let root;
let maker;
const PATH = '/usr/bin:/bin';
const execOnly = { exec: { allowPaths: ['/usr/bin', '/bin'] }, env: { PATH } };

before(async () => {
  if (skip) return;
  try {
    root = mkdtempSync(join(base, 'endo-plugin-'));
  } catch (e) {
    throw Error(`${e.message}: set ENDO_PLUGIN_TEST_DIR to a directory outside /tmp that this user can write`);
  }
  mkdirSync(join(root, 'ro'));
  mkdirSync(join(root, 'rw'));
  mkdirSync(join(root, 'secret'));
  writeFileSync(join(root, 'ro', 'file'), 'read me');
  writeFileSync(join(root, 'secret', 'key'), 's3cret');
  maker = await make(undefined, undefined, { env: { SANDBOX_BIN: bin } });
});

after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A loopback listener that counts the connections it accepts, and greets each. */
const listener = () =>
  new Promise(resolve => {
    const counter = { count: 0 };
    const server = createServer(sock => {
      counter.count += 1;
      sock.on('error', () => {});
      sock.end('greeting\n');
    });
    server.listen(0, '127.0.0.1', () => {
      counter.port = server.address().port;
      counter.close = () => new Promise(r => server.close(r));
      resolve(counter);
    });
  });

// Arguments as a caller's E() delivers them: hardened (passable).
const describe = d => maker.describe(harden(d));
const run = (sb, ...args) => sb.run(...harden(args));

const settle = () => new Promise(r => setTimeout(r, 300));

/**
 * bash's /dev/tcp: a plain connect(), no proxy; it prints what the
 * listener sent, so that "connected greeting" proves the listener was
 * reached (a relay in between accepts before it dials).
 */
const dial = port => ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && read -t 5 line <&3 && echo "connected $line"`];

test('describe() returns a working Sandbox that runs echo hello', { skip }, async () => {
  const sb = await describe(execOnly);
  const res = await run(sb, 'echo', ['hello']);
  assert.equal(res.exitCode, 0, res.stderr);
  assert.equal(res.stdout, 'hello\n');
  assert.equal(res.stderr, '');
  assert.equal(res.timedOut, false);
  assert.equal(passStyleOf(sb), 'remotable');
});

test('a read outside the allowed paths is denied', { skip }, async () => {
  const sb = await describe({ ...execOnly, fs: [{ path: join(root, 'ro'), mode: 'read' }] });
  const ok = await run(sb, 'cat', [join(root, 'ro', 'file')]);
  assert.equal(ok.stdout, 'read me', ok.stderr);
  const res = await run(sb, 'cat', [join(root, 'secret', 'key')]);
  assert.notEqual(res.exitCode, 0);
  assert.doesNotMatch(res.stdout, /s3cret/);
  assert.match(res.stderr, /Permission denied/);
});

test('a read-only path cannot be written', { skip }, async () => {
  const sb = await describe({
    ...execOnly,
    fs: [
      { path: join(root, 'ro'), mode: 'read' },
      { path: join(root, 'rw'), mode: 'read-write' },
    ],
  });
  const res = await run(sb, 'sh', ['-c', `echo x > ${join(root, 'ro', 'new')}`]);
  assert.notEqual(res.exitCode, 0);
  assert.match(res.stderr, /Permission denied|Read-only file system/);
  assert.equal(existsSync(join(root, 'ro', 'new')), false);
  const w = await run(sb, 'sh', ['-c', `echo x > ${join(root, 'rw', 'new')}`]);
  assert.equal(w.exitCode, 0, w.stderr);
  assert.equal(readFileSync(join(root, 'rw', 'new'), 'utf8'), 'x\n');
});

test('with the network denied nothing connects', { skip }, async () => {
  const l = await listener();
  try {
    const sb = await describe(execOnly);
    const res = await run(sb, 'bash', dial(l.port));
    await settle();
    assert.notEqual(res.exitCode, 0);
    assert.doesNotMatch(res.stdout, /connected/);
    assert.equal(l.count, 0, 'the loopback listener saw a connection');
  } finally {
    await l.close();
  }
});

test('allowHosts ["localhost"] with allowPorts [P] reaches P and nothing else', { skip }, async () => {
  const p = await listener();
  const q = await listener();
  try {
    const sb = await describe({
      ...execOnly,
      net: { outbound: true, allowHosts: ['localhost'], allowPorts: [p.port] },
    });
    const ok = await run(sb, 'bash', dial(p.port));
    assert.equal(ok.exitCode, 0, ok.stderr);
    assert.equal(ok.stdout, 'connected greeting\n');
    const no = await run(sb, 'bash', dial(q.port));
    await settle();
    assert.notEqual(no.exitCode, 0);
    assert.equal(p.count, 1);
    assert.equal(q.count, 0, 'a port not granted was reached');
    const eff = sb.getEndowments();
    assert.deepEqual(eff.net.allowPorts, [p.port]);
  } finally {
    await p.close();
    await q.close();
  }
});

test('inbound: the program listens on an allowPorts port, reachable from the caller', { skip: skip || (!existsSync('/usr/bin/python3') && 'no /usr/bin/python3 to listen with') }, async () => {
  // A free port: listen, note it, close.
  const free = await listener();
  const port = free.port;
  await free.close();
  const sb = await describe({ ...execOnly, net: { inbound: true, allowPorts: [port] } });
  const serve = `import socket\ns=socket.socket()\ns.bind(("127.0.0.1", ${port}))\ns.listen()\nc,_=s.accept()\nc.sendall(b"from inside")\nc.close()`;
  const running = run(sb, '/usr/bin/python3', ['-c', serve], { timeout: 10_000 });
  let got = '';
  for (let i = 0; i < 100 && got === ''; i += 1) {
    got = await new Promise(resolve => {
      const c = createConnection({ host: '127.0.0.1', port }, () => {});
      let data = '';
      c.on('data', d => {
        data += d;
      });
      c.on('close', () => resolve(data));
      c.on('error', () => resolve(''));
    });
    if (got === '') await new Promise(r => setTimeout(r, 100));
  }
  const res = await running;
  assert.equal(got, 'from inside', `nothing reached the program's listener: ${res.stderr}`);
  assert.equal(res.exitCode, 0, res.stderr);
  // Another port stays closed to it.
  const other = await describe({ ...execOnly, net: { inbound: true, allowPorts: [port] } });
  const bad = await run(other, '/usr/bin/python3', ['-c', serve.replace(String(port), String(port === 65535 ? 65534 : port + 1))]);
  assert.notEqual(bad.exitCode, 0);
  assert.match(bad.stderr, /PermissionError|Permission denied/);
});

test('mountAt shows the files there (an existing target)', { skip }, async t => {
  const target = mkdtempSync(join(root, 'target-'));
  let sb;
  try {
    sb = await describe({ ...execOnly, fs: [{ path: join(root, 'ro'), mode: 'read', mountAt: target }] });
  } catch (e) {
    // Not root and no user namespaces: no mount layer, and the grant
    // is refused, as it must be, rather than made without the mount.
    if (process.getuid() !== 0 && /fs\[0\]\.mountAt .*cannot be shown there on this machine/.test(e.message)) {
      t.skip(`no mount layer for this user here: ${e.message}`);
      return;
    }
    throw e;
  }
  const res = await run(sb, 'cat', [join(target, 'file')]);
  assert.equal(res.stdout, 'read me', res.stderr);
  const inside = await run(sb, 'cat', ['file'], { cwd: target });
  assert.equal(inside.stdout, 'read me', `cwd at the mount: ${inside.stderr}`);
  assert.deepEqual(readdirSync(target), [], 'the mount leaked to the host');
});

test('mountAt "/workspace" shows the files there', { skip }, async t => {
  let sb;
  try {
    sb = await describe({ ...execOnly, fs: [{ path: join(root, 'ro'), mode: 'read', mountAt: '/workspace' }] });
  } catch (e) {
    // Until the mount layer gives the program a root of its own, a
    // target that does not exist on the host is refused, with this
    // reason; it must never be run without the mount.
    if (/mountAt "\/workspace".*target does not exist/.test(e.message)) {
      t.skip(`not yet made here: ${e.message}`);
      return;
    }
    throw e;
  }
  const res = await run(sb, 'cat', ['/workspace/file']);
  assert.equal(res.stdout, 'read me', res.stderr);
  assert.equal(existsSync('/workspace/file'), false, 'the mount leaked to the host');
});

test('a guest holding only a Sandbox cannot reach the SandboxMaker or describe a wider one', { skip }, async () => {
  const sb = await describe({ ...execOnly, fs: [{ path: join(root, 'ro'), mode: 'read' }] });
  // Its methods are these three, and none of them returns the maker.
  assert.deepEqual([...sb.__getMethodNames__()].filter(n => !n.startsWith('__')).sort(), ['getEndowments', 'help', 'run']);
  assert.equal(sb.describe, undefined);
  assert.equal(Object.getOwnPropertyNames(sb).length, 0);
  assert.ok(Object.isFrozen(sb) && Object.isFrozen(Object.getPrototypeOf(sb)));
  // getEndowments() is a frozen copy: changing it changes nothing.
  const eff = sb.getEndowments();
  assert.ok(Object.isFrozen(eff) && Object.isFrozen(eff.fs[0]));
  assert.throws(() => {
    eff.fs.push({ path: '/', mode: 'read-write' });
  });
  // run()'s options cannot carry endowments.
  await assert.rejects(run(sb, 'cat', [join(root, 'secret', 'key')], { fs: [{ path: root, mode: 'read' }] }), /unknown option "fs": the options are cwd and timeout/);
  await assert.rejects(run(sb, 'cat', [join(root, 'secret', 'key')], { env: { A: 'b' } }), /unknown option "env"/);
  await assert.rejects(run(sb, 'cat', [], { timeout: -1 }), /opts\.timeout -1: want milliseconds/);
  await assert.rejects(run(sb, 'cat', [], { cwd: 'rel' }), /opts\.cwd "rel": want an absolute path/);
  // A granted cwd widens nothing; one outside is still denied.
  const res = await run(sb, 'cat', ['key'], { cwd: join(root, 'secret') });
  assert.doesNotMatch(res.stdout, /s3cret/);
  assert.match(sb.help(), /cannot change them or make another Sandbox/);
});

test('the guards reject malformed descriptors with errors that say what to write', { skip }, async () => {
  const dir = join(root, 'ro');
  await assert.rejects(describe({ fs: [{ path: dir, mode: 'rw' }] }), e => {
    assert.match(e.message, /"rw"/);
    assert.match(e.message, /read-write/);
    return true;
  });
  await assert.rejects(describe({ fs: [{ path: 'work/x', mode: 'read' }] }), e => {
    assert.match(e.message, /fs\[0\]\.path "work\/x": path is not absolute: write the whole path from the root/);
    assert.match(e.message, /help\(\)/);
    return true;
  });
  await assert.rejects(describe({ fs: [{ path: `${dir}/../secret`, mode: 'read' }] }), /fs\[0\]\.path .*"\.\." segment: write the path without "\.\."/);
  await assert.rejects(describe({ version: 2 }), /version/);
  await assert.rejects(describe({ filesystem: [] }), /unknown field "filesystem".*the fields are version, fs, net/);
  await assert.rejects(describe({ net: { outbound: true, allowhosts: ['localhost'] } }), /unknown field "allowhosts".*allowHosts/);
  await assert.rejects(describe({ net: { outbound: true, allowHosts: ['https://example.com'] } }), /net\.allowHosts\[0\].*URL/);
  await assert.rejects(describe({ net: { inbound: true } }), /allowPorts/);
  await assert.rejects(describe({ net: { outbound: true, allowPorts: [0] } }), /allowPorts/);
});

test('output is kept up to maxOutput per stream, and the result says when it was cut', { skip }, async () => {
  const sb = await describe(execOnly);
  const res = await run(sb, 'sh', ['-c', 'yes | head -c 5000000; echo done >&2']);
  assert.equal(res.exitCode, 0, res.stderr);
  assert.equal(res.maxOutput, 4 * 1024 * 1024);
  assert.equal(res.stdout.length, res.maxOutput);
  assert.equal(res.stdoutTruncated, true);
  assert.equal(res.stderr, 'done\n');
  assert.equal(res.stderrTruncated, false);
  assert.match(sb.help('run'), new RegExp(`first\\s+${res.maxOutput} bytes`));
});

test('a timeout kills a sleeping tree', { skip }, async () => {
  const mark = `ENDO_PLUGIN_TIMEOUT_TEST=${process.pid}-${Date.now()}`;
  const [k, v] = mark.split('=');
  const sb = await describe({ ...execOnly, env: { PATH, [k]: v } });
  const start = Date.now();
  const res = await run(sb, 'sh', ['-c', 'sleep 60 & sleep 60; echo never'], { timeout: 500 });
  assert.equal(res.timedOut, true);
  assert.equal(res.exitCode, -1);
  assert.doesNotMatch(res.stdout, /never/);
  assert.ok(Date.now() - start < 15_000, `took ${Date.now() - start} ms`);
  if (process.platform === 'linux') {
    const left = readdirSync('/proc')
      .filter(d => /^\d+$/.test(d))
      .filter(d => {
        try {
          return readFileSync(`/proc/${d}/environ`, 'latin1').split('\0').includes(mark);
        } catch {
          return false;
        }
      });
    assert.deepEqual(left, [], 'processes of the run outlived its timeout');
  }
});

test('help() tells an LLM every method, the return shape, an example, and what is enforced here', { skip }, async () => {
  const h = maker.help();
  for (const want of ['describe(endowments', 'help(method', 'Example:', 'mountAt', 'allowHosts', 'exec', 'create processes', 'version: 1']) {
    assert.ok(h.includes(want), `maker help lacks ${want}`);
  }
  assert.match(maker.help('describe'), /^describe\(/);
  const sb = await describe(execOnly);
  const s = sb.help();
  for (const want of ['run(command', 'getEndowments()', 'RunResult', 'exitCode', 'stdoutTruncated', 'timedOut', 'Example:', 'enforced here', 'It is stopped after 30s']) {
    assert.ok(s.includes(want), `sandbox help lacks ${want}`);
  }
  assert.match(sb.help('nope'), /the methods are run, getEndowments, help/);
  assert.match(sb.help('toString'), /no method/);
});
