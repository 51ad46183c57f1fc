import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST_LISTENER_GREETING, startHostListener, type HostListener } from '@toolgate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BwrapExecutor, BwrapRunner } from '../src/index.js';

// Decided once: without a working bwrap the suite is skipped with its reason, except in CI,
// where a missing sandbox must fail the build rather than silently test nothing.
const unavailable = await new BwrapExecutor().check().then(
  () => undefined,
  (error: unknown) => (error as Error).message,
);
const inCi = process.env['CI'] === 'true';
if (unavailable && inCi) throw new Error(`CI=true but the bwrap tier cannot run here: ${unavailable} (.ci/run installs bubblewrap)`);
if (unavailable) console.warn(`skipping the bwrap tier tests: ${unavailable}`);

// A sentence, not a sandbox: holds on every host, so it runs where bwrap cannot.
describe('BwrapExecutor isolation summary', () => {
  it('says what the sandbox sees and that it has no network', () => {
    const { summary } = new BwrapExecutor().isolation;
    expect(summary).toContain('sandbox that sees only the workspace (at /workspace)');
    expect(summary).toContain('a read-only /usr');
    expect(summary).toContain('no network');
    expect(summary).toContain('tier 2');
  });
});

describe.skipIf(unavailable !== undefined)('the bwrap sandbox', () => {
  const runner = new BwrapRunner();
  let base: string;
  let workspace: string;
  let outside: string;
  let listener: HostListener;

  beforeAll(async () => {
    listener = await startHostListener();
  });
  afterAll(() => listener.close());
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-')));
    workspace = join(base, 'tenant-a');
    outside = join(base, 'outside');
    await mkdir(workspace);
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), 'outside the workspace');
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const sh = (script: string) =>
    runner.run({ command: 'sh', args: ['-c', script] }, { workspaceRoot: workspace, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 });

  it("cannot read the host's /etc/passwd: it sees only a generated one", async () => {
    const host = await readFile('/etc/passwd', 'utf8');
    const result = await sh('cat /etc/passwd; echo ---; ls /etc');
    const [inside = '', listing = ''] = result.stdout.split('---\n');
    expect(inside).not.toBe(host);
    expect(inside).toMatch(/^sandbox:x:1000:1000:/);
    expect(inside).not.toMatch(/^root:/m);
    const entries = listing.trim().split('\n');
    expect(entries).toEqual(expect.arrayContaining(['group', 'passwd']));
    for (const entry of entries) expect(['alternatives', 'group', 'ld.so.cache', 'passwd']).toContain(entry);
    const shadow = await sh('cat /etc/shadow');
    expect(shadow.exitCode).not.toBe(0);
  });

  it('sees no host home, root, run or var directories and no file outside the workspace', async () => {
    const result = await sh(`for p in /root /home /run /var /work /srv /opt ${outside} ${outside}/secret.txt ${base}; do [ -e "$p" ] && echo "visible: $p"; done; ls /`);
    expect(result.stdout).not.toContain('visible:');
    const root = result.stdout.trim().split('\n');
    expect(root).toEqual(expect.arrayContaining(['dev', 'etc', 'proc', 'tmp', 'usr', 'workspace']));
    for (const entry of root) {
      expect(['bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32', 'proc', 'sbin', 'tmp', 'usr', 'workspace']).toContain(entry);
    }
  });

  it('cannot reach the network, not even a server on the host loopback', async () => {
    const before = listener.connections();
    // Control: the server answers from the host.
    expect(await listener.greetingFromHost()).toBe(HOST_LISTENER_GREETING);
    const result = await runner.run(
      { command: 'bash', args: ['-c', `exec 3<>/dev/tcp/127.0.0.1/${listener.port} && cat <&3`] },
      { workspaceRoot: workspace, timeoutMs: 10_000, maxOutputBytes: 4096 },
    );
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).not.toContain(HOST_LISTENER_GREETING.trim());
    expect(listener.connections()).toBe(before + 1);
    const interfaces = await sh('cat /proc/net/dev');
    expect(interfaces.stdout).not.toMatch(/eth|ens|enp|wlan|docker|veth/);
  });

  it('cannot write outside the workspace, but can inside it', async () => {
    const marker = `toolgate-bwrap-${Math.random().toString(36).slice(2)}`;
    const result = await sh(
      [
        `echo x > ${outside}/planted.txt; echo "outside=$?"`,
        `echo x > /usr/${marker}; echo "usr=$?"`,
        `echo x > /${marker}; echo "root=$?"`,
        `echo x > /etc/${marker}; echo "etc=$?"`,
        `echo x > /tmp/${marker} && echo "tmp=$?"`,
        'echo inside > /workspace/inside.txt; echo "workspace=$?"',
        'mkdir -p deep/er && echo nested > deep/er/file.txt; echo "nested=$?"',
      ].join('; '),
    );
    expect(result.stdout).toMatch(/outside=[1-9]/);
    expect(result.stdout).toMatch(/usr=[1-9]/);
    expect(result.stdout).toMatch(/root=[1-9]/);
    expect(result.stdout).toMatch(/etc=[1-9]/);
    expect(result.stdout).toContain('tmp=0');
    expect(result.stdout).toContain('workspace=0');
    expect(result.stdout).toContain('nested=0');
    await expect(stat(join(outside, 'planted.txt'))).rejects.toThrow();
    await expect(stat(join('/usr', marker))).rejects.toThrow();
    // The sandbox's /tmp is its own: nothing lands in the host's.
    await expect(stat(join('/tmp', marker))).rejects.toThrow();
    await expect(readFile(join(workspace, 'inside.txt'), 'utf8')).resolves.toBe('inside\n');
    await expect(readFile(join(workspace, 'deep/er/file.txt'), 'utf8')).resolves.toBe('nested\n');
  });

  it('runs as an unprivileged user with no capabilities and no way to create namespaces', async () => {
    const result = await sh('id -u; grep CapEff /proc/self/status; unshare -U true 2>/dev/null; echo "unshare=$?"; hostname');
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('1000');
    expect(lines[1]).toMatch(/^CapEff:\s+0+$/);
    expect(lines[2]).toMatch(/^unshare=[1-9]/);
    expect(lines[3]).toBe('toolgate-sandbox');
  });

  it('sees only its own processes', async () => {
    const result = await sh('ls /proc | grep -c "^[0-9]"');
    expect(Number(result.stdout.trim())).toBeLessThan(6);
  });

  it('caps the size of its private /tmp', async () => {
    const small = new BwrapRunner({ tmpSizeBytes: 1024 * 1024 });
    const result = await small.run(
      { command: 'sh', args: ['-c', 'head -c 2000000 /dev/zero > /tmp/big; echo "rc=$?"'] },
      { workspaceRoot: workspace, timeoutMs: 10_000, maxOutputBytes: 4096 },
    );
    expect(result.stdout).toMatch(/rc=[1-9]/);
  });

  it('runs git in the workspace with the generated identity', async () => {
    const result = await sh('git init -q . && git -c user.name=a -c user.email=a@example.invalid commit -q --allow-empty -m first && git log --format=%s');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'first\n' });
  });

  it('reports its own setup failures without the host paths bwrap names', async () => {
    const fake = join(base, 'fake-bwrap');
    await writeFile(fake, `#!/bin/sh\necho "bwrap: Can't mount proc on ${base}/secret/host/path: Operation not permitted" >&2\nexit 1\n`, { mode: 0o755 });
    const failing = new BwrapRunner({ bwrapPath: fake });
    const error = await failing
      .run({ command: 'true', args: [] }, { workspaceRoot: workspace, timeoutMs: 5000, maxOutputBytes: 1000 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'SANDBOX_FAILED', message: 'the sandbox could not be set up for this command' });
    await expect(new BwrapExecutor({ bwrapPath: fake }).check()).rejects.toThrow('bwrap');
  });
});

describe('BwrapExecutor.check', () => {
  it('names the missing binary when bwrap is not installed', async () => {
    const missing = new BwrapExecutor({ bwrapPath: 'toolgate-no-such-bwrap' });
    await expect(missing.check()).rejects.toThrow("bubblewrap is not installed: 'toolgate-no-such-bwrap' is not on PATH");
  });

  it('refuses read-only binds that are relative or cover the workspace', () => {
    expect(() => new BwrapRunner({ readOnly: ['etc/ssl'] })).toThrow('absolute path');
    expect(() => new BwrapRunner({ readOnly: ['/workspace/x'] })).toThrow('outside /workspace');
    expect(() => new BwrapRunner({ uid: 0 })).toThrow('uid/gid');
  });
});
