import { createHash, createHmac } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent } from '@toolgate/contracts';

/** Test helpers that read and rewrite trail files the way an attacker (or a crash) would. */

export const GENESIS = '0'.repeat(64);

export function sampleEvent(i: number, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    event: i % 3 === 0 ? 'denied' : 'authorized',
    ts: new Date(Date.UTC(2025, 2, 1, 12, 0, i)).toISOString(),
    tenant: 'acme',
    principal: `p${i % 4}`,
    tool: 'web_search',
    version: '1.0.0',
    gate: 'audit',
    argsDigest: `sha256:${createHash('sha256').update(String(i)).digest('hex')}`,
    callId: `call-${i}`,
    ...overrides,
  };
}

export async function tempRoot(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), `toolgate-${prefix}-`));
  return { dir: join(root, 'audit'), cleanup: () => rm(root, { recursive: true, force: true }) };
}

export async function segmentNames(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => /^audit-\d{8,}\.log$/.test(n)).sort();
}

/** One segment split into its header line and frame lines (without their newlines). */
export interface SegmentText {
  readonly name: string;
  header: string;
  frames: string[];
}

export async function readSegments(dir: string): Promise<SegmentText[]> {
  const out: SegmentText[] = [];
  for (const name of await segmentNames(dir)) {
    const text = await readFile(join(dir, name), 'utf8');
    const lines = text.split('\n');
    if (lines[lines.length - 1] !== '') throw new Error(`${name} does not end with a newline`);
    out.push({ name, header: lines[0] as string, frames: lines.slice(1, -1) });
  }
  return out;
}

export async function writeSegments(dir: string, segments: readonly SegmentText[]): Promise<void> {
  for (const s of segments) await writeFile(join(dir, s.name), [s.header, ...s.frames, ''].join('\n'));
}

export function frameJson(line: string): string {
  return line.slice(74);
}

export function frameLine(json: string, digest: string): string {
  return `${Buffer.byteLength(json).toString(16).padStart(8, '0')}:${digest}:${json}`;
}

export const plainDigest = (json: string): string => createHash('sha256').update(json, 'utf8').digest('hex');
export const hmacDigest =
  (key: string) =>
  (json: string): string =>
    createHmac('sha256', Buffer.from(key, 'utf8')).update(json, 'utf8').digest('hex');

/**
 * What someone who can rewrite the files does: edit one record, then recompute every digest and
 * `prev` after it (and the segment headers) with `digest`, so the chain is consistent again.
 */
export async function rewriteChain(dir: string, edit: (seq: number, json: string) => string, digest: (json: string) => string): Promise<void> {
  const segments = await readSegments(dir);
  let prev = GENESIS;
  for (const segment of segments) {
    segment.header = segment.header.replace(/prev=[0-9a-f]{64}$/, `prev=${prev}`);
    segment.frames = segment.frames.map((line) => {
      const record = JSON.parse(frameJson(line)) as { seq: number; prev: string };
      record.prev = prev;
      const json = edit(record.seq, JSON.stringify(record));
      const d = digest(json);
      prev = d;
      return frameLine(json, d);
    });
  }
  await writeSegments(dir, segments);
}

/** seq → digest of every complete frame on disk, read without the sink's code. */
export async function framesOnDisk(dir: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const name of await segmentNames(dir)) {
    const text = await readFile(join(dir, name), 'latin1');
    const lines = text.split('\n').slice(1);
    for (const line of lines) {
      const seq = /^\{"seq":(\d+),/.exec(line.slice(74));
      if (seq && line.length > 74) out.set(Number(seq[1]), line.slice(9, 73));
    }
  }
  return out;
}
