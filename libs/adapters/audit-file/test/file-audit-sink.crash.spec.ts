import { spawn, type ChildProcess } from 'node:child_process';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditUnavailableError } from '@toolgate/contracts';
import { FileAuditSink, verifyAuditDirectory } from '../src/index.js';
import { framesOnDisk, segmentNames, tempRoot } from './trail-files.js';

const TSX = fileURLToPath(new URL('../../../../node_modules/.bin/tsx', import.meta.url));
const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
// At least 50 rounds in CI; fewer locally keeps the inner loop quick.
const ROUNDS = process.env['CI'] ? 50 : 12;
const WRITERS = 48;
const SEGMENT_BYTES = 256 * 1024;

interface Round {
  readonly acks: Map<number, string>;
  /** The node process that writes (tsx's own child), not tsx. */
  readonly writerPid: number;
  readonly child: ChildProcess;
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Resolves once every thread of `pid` has exited. The leader of a multi-threaded process shows as
 * a zombie while its other threads are still tearing down, and the files (and so the lock) are
 * closed only when the last one is gone.
 */
async function exited(pid: number): Promise<void> {
  const procfs = await readFile('/proc/self/stat', 'latin1').then(
    () => true,
    () => false,
  );
  for (let i = 0; i < 500; i++) {
    if (!procfs) {
      // Without /proc (not Linux): wait until the pid is gone altogether.
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      continue;
    }
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
    if (stat === undefined) return;
    const threads = await readdir(`/proc/${pid}/task`).catch(() => []);
    if (/^\d+ \(.*\) Z/.test(stat) && threads.length <= 1) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`process ${pid} did not exit after SIGKILL`);
}

/** Starts the child and resolves once it has opened the trail (or rejects with its error). */
function startChild(dir: string): Promise<Round> {
  // detached: its own process group, because tsx runs the script in a node child of its own and
  // cannot pass a SIGKILL on; killing the group kills the writer itself.
  const child = spawn(TSX, [CHILD, dir, String(SEGMENT_BYTES), String(WRITERS)], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const acks = new Map<number, string>();
  const exit = new Promise((resolve) => child.once('exit', resolve));
  let buffered = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<Round>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not start: ${stderr}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.startsWith('ready ')) {
          clearTimeout(timer);
          resolve({ acks, writerPid: Number(line.slice(6)), child });
        } else if (line.startsWith('ack ')) {
          const [, seq, digest] = line.split(' ');
          acks.set(Number(seq), digest as string);
        } else if (line.startsWith('error ')) {
          clearTimeout(timer);
          reject(new Error(`child could not open the trail: ${line.slice(6)}`));
        }
      }
    });
    void exit.then(() => {
      killGroup(child);
      clearTimeout(timer);
      reject(new Error(`child exited before it was ready: ${stderr}`));
    });
  });
}

describe('FileAuditSink under SIGKILL', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempRoot('audit-crash'));
  });
  afterAll(async () => cleanup());

  it(
    `keeps every acknowledged append across ${ROUNDS} kills at random moments`,
    async () => {
      let totalAcks = 0;
      let tornRounds = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        const { acks, writerPid, child } = await startChild(dir);
        if (round === 1) {
          // While the child writes, nobody else may: the lock is held across processes.
          await expect(FileAuditSink.open(dir)).rejects.toBeInstanceOf(AuditUnavailableError);
        }
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 250));
        killGroup(child);
        await exited(writerPid);
        totalAcks += acks.size;

        // Every third round, also leave a partial frame, as a machine crash mid-write would.
        const tear = round % 3 === 0;
        if (tear) {
          const names = await segmentNames(dir);
          const fake = `0000012c:${'ab'.repeat(32)}:{"seq":999999999,"prev":"${'cd'.repeat(32)}","ts":"2025`;
          await appendFile(join(dir, names[names.length - 1] as string), fake.slice(0, 1 + Math.floor(Math.random() * (fake.length - 1))));
        }

        // The kernel dropped the child's lock with the child: reopening works at once.
        const sink = await FileAuditSink.open(dir, { segmentBytes: SEGMENT_BYTES });
        try {
          const onDisk = await framesOnDisk(dir);
          for (const [seq, digest] of acks) {
            if (onDisk.get(seq) !== digest) throw new Error(`round ${round}: acknowledged seq ${seq} is missing or different after the kill`);
          }
          const report = await sink.verify();
          expect(report.ok, report.fault?.reason).toBe(true);
          if (tear) {
            const [last] = await sink.tail({ limit: 1 });
            expect(last?.event).toBe('recovered');
            tornRounds += 1;
          }
        } finally {
          await sink.close();
        }
      }
      expect(totalAcks).toBeGreaterThan(ROUNDS * 10);
      expect(tornRounds).toBe(Math.floor(ROUNDS / 3));
      const offline = await verifyAuditDirectory({ dir });
      expect(offline.ok).toBe(true);
      expect((await segmentNames(dir)).length).toBeGreaterThan(1);
    },
    170_000,
  );
});
