import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/** The repository root, where the README's `npm start` is run. */
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const START_BOUND_MS = 60_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Resolves true once nothing listens on `port` any more (a refused connection), false at the bound. */
async function stopsListening(port: number, boundMs: number): Promise<boolean> {
  const until = Date.now() + boundMs;
  while (Date.now() < until) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/**
 * A process manager (systemd, a container runtime, a CI job) stops `npm start` by signalling npm,
 * not the node process npm started. The signal must reach the server, which then closes its
 * adapters; a server left running without its parent would keep the data dir's locks.
 */
describe('npm start under a process manager', () => {
  it('stops the server when npm itself gets SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-npm-start-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const npm = spawn('npm', ['start'], {
      cwd: REPO_ROOT,
      env: { ...process.env, TOOLGATE_DATA_DIR: join(dir, 'data'), TOOLGATE_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the cleanup can end whatever npm started even if it is orphaned.
      detached: true,
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      try {
        process.kill(-(npm.pid as number), 'SIGKILL');
      } catch {
        // The group is gone: everything in it stopped.
      }
    });

    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not listen within ${START_BOUND_MS} ms:\n${output}`)), START_BOUND_MS);
      const look = () => {
        const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      };
      npm.stderr.on('data', look);
      npm.stdout.on('data', look);
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);

    // Only npm is signalled, as a process manager does; never its group.
    npm.kill('SIGTERM');
    expect(await exited).not.toBeNull();
    expect(await stopsListening(port, 10_000)).toBe(true);
    expect(output).toContain('SIGTERM: shutting down');
  }, 90_000);
});
