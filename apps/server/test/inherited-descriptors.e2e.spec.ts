import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable } from './e2e-harness.js';

// As in the isolation suite: without a usable bwrap the sandboxed test skips with its reason,
// except under CI=true, where it fails.
const unavailable = await bwrapUnavailable('inherited descriptors e2e');

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
// `--import tsx` resolves from the working directory: the server package's own.
const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'launcher-secret-the-sandbox-must-not-read-0123456789';

/**
 * Class: descriptors inherited from the launcher. A wrapper script, a supervisor or socket
 * activation can start the server with open files that lack close-on-exec; bubblewrap closes
 * nothing, so without care every sandboxed process could read them through /proc/self/fd.
 */
describe('descriptors the server inherited from its launcher', () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;
  let stderr = '';
  const secretFiles: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-fds-'));
    const launcherFds: number[] = [];
    // Three spellings of a leaked descriptor: a file opened for reading, one for writing, and a
    // descriptor number far above the usual ones.
    for (const [name, flags] of [['read.txt', 'r'], ['write.txt', 'a']] as const) {
      const file = join(dir, name);
      await writeFile(file, SECRET);
      secretFiles.push(file);
      launcherFds.push(openSync(file, flags));
    }
    const stdio: (number | 'ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe', launcherFds[0]!, launcherFds[1]!];
    // Leave fds 5…40 unset so the third leak sits at 41.
    for (let fd = 5; fd < 41; fd++) stdio.push('ignore');
    stdio.push(launcherFds[0]!);
    server = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      cwd: SERVER_DIR,
      env: { ...process.env, TOOLGATE_DATA_DIR: join(dir, 'data'), TOOLGATE_PORT: '0' },
      stdio,
    });
    for (const fd of launcherFds) closeSync(fd);
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 60_000);
      server.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /listening on (http:\/\/\S+) /.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      server.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
    });
  }, 90_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await new Promise((resolve) => (server?.exitCode !== null ? resolve(undefined) : server.once('exit', resolve)));
    await rm(dir, { recursive: true, force: true });
  });

  it('closes every one a child would inherit, and says so', async () => {
    // Node itself marks some low inherited descriptors close-on-exec; fd 41 it leaves open.
    expect(stderr, stderr).toMatch(/closed \d+ descriptor\(s\) inherited from the launcher \([\d, ]*\b41\b[\d, ]*\)/);
    for (const fd of await readdir(`/proc/${server.pid}/fd`)) {
      const target = await readlink(`/proc/${server.pid}/fd/${fd}`).catch(() => '');
      if (!secretFiles.includes(target)) continue;
      // Still open in the server only if no child can inherit it.
      const flags = /^flags:\s*([0-7]+)$/m.exec(await readFile(`/proc/${server.pid}/fdinfo/${fd}`, 'utf8'))![1]!;
      expect(parseInt(flags, 8) & 0o2000000, `fd ${fd} -> ${target}`).not.toBe(0);
    }
  });

  it.skipIf(unavailable !== undefined)('leaves nothing of them for a sandboxed bash to read', async () => {
    const res = await fetch(`${url}/api/v1/tools/invoke`, {
      method: 'POST',
      headers: { authorization: 'Bearer demo', 'content-type': 'application/json' },
      body: JSON.stringify({
        tool: 'bash',
        args: { command: 'ls -l /proc/self/fd; for fd in 3 4 41; do cat /proc/self/fd/$fd 2>/dev/null; done; cat /proc/1/fd/3 /proc/1/fd/4 /proc/1/fd/41 2>/dev/null; true' },
        approved: true,
      }),
    });
    const body = (await res.json()) as { ok: boolean; output?: { stdout: string } };
    expect(body.ok).toBe(true);
    expect(body.output!.stdout).toMatch(/^total \d+/m);
    expect(body.output!.stdout).not.toContain(SECRET);
    for (const file of secretFiles) expect(body.output!.stdout).not.toContain(file);
  });
});
