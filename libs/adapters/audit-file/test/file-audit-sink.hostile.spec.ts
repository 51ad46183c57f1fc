import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, rename, rm, stat, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditCorruptError, AuditUnavailableError } from '@toolgate/contracts';
import {
  FileAuditSink,
  formatAuditReport,
  nodeAuditFileIo,
  verifyAuditDirectory,
  type AuditFileIo,
  type FileAuditSinkOptions,
} from '../src/index.js';
import {
  frameJson,
  frameLine,
  GENESIS,
  hmacDigest,
  plainDigest,
  readSegments,
  rewriteChain,
  sampleEvent,
  segmentNames,
  tempRoot,
  writeSegments,
} from './trail-files.js';

const KEY = 'hostile-suite-hmac-key-0123456789abcdef';
const SEG1 = 'audit-00000001.log';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempRoot('audit-hostile'));
});
afterEach(async () => cleanup());

async function writeTrail(count: number, options: FileAuditSinkOptions = {}): Promise<void> {
  const sink = await FileAuditSink.open(dir, options);
  for (let i = 1; i <= count; i++) await sink.append(sampleEvent(i));
  await sink.close();
}

async function openFails(options: FileAuditSinkOptions = {}): Promise<Error> {
  const error = await FileAuditSink.open(dir, options).then(
    async (sink) => {
      await sink.close();
      throw new Error('the damaged trail was opened');
    },
    (e: unknown) => e as Error,
  );
  return error;
}

async function flipByte(name: string, offset: number): Promise<void> {
  const path = join(dir, name);
  const bytes = await readFile(path);
  bytes[offset] = (bytes[offset] as number) ^ 0x01;
  await writeFile(path, bytes);
}

/** Byte offset of the JSON of frame `index` (0-based) in a segment. */
async function jsonOffset(name: string, index: number): Promise<number> {
  const text = await readFile(join(dir, name), 'latin1');
  let at = text.indexOf('\n') + 1;
  for (let i = 0; i < index; i++) at = text.indexOf('\n', at) + 1;
  return at + 74;
}

describe('audit files readable by other local users', () => {
  it('keeps the directory 0700 and every segment, rotated ones included, and the lock 0600 while writing', async () => {
    const trail = join(dir, 'trail');
    // The smallest segment bound (4 KiB), so forty records rotate.
    const sink = await FileAuditSink.open(trail, { segmentBytes: 4096 });
    for (let i = 1; i <= 40; i++) await sink.append(sampleEvent(i));
    const names = await readdir(trail);
    expect(names.filter((n) => n.endsWith('.log')).length).toBeGreaterThan(1);
    expect((await stat(trail)).mode & 0o777).toBe(0o700);
    for (const name of names) expect([name, (await stat(join(trail, name))).mode & 0o777]).toEqual([name, 0o600]);
    await sink.close();
  });
});

describe('FileAuditSink against damage and tampering', () => {
  it('refuses to open after a flipped byte, naming the segment and the record', async () => {
    await writeTrail(6);
    await flipByte(SEG1, (await jsonOffset(SEG1, 3)) + 20);
    const error = await openFails();
    expect(error).toBeInstanceOf(AuditCorruptError);
    expect((error as AuditCorruptError).segment).toBe(SEG1);
    expect((error as AuditCorruptError).record).toBe(4);
    expect(error.message).toMatch(/audit-00000001\.log, record 4 \(seq 4\).*digest does not match/);
    expect(error.message).not.toContain(dir);

    const offline = await verifyAuditDirectory({ dir });
    expect(offline.ok).toBe(false);
    expect(offline.records).toBe(3);
    expect(offline.fault).toMatchObject({ segment: SEG1, record: 4, seq: 4 });
    expect(formatAuditReport(offline)).toMatch(/DAMAGED[\s\S]*first fault: segment audit-00000001\.log, record 4, seq 4[\s\S]*checked 3 records in 1 segment/);
  });

  it('detects tampering under a running writer: verify reports it and the sink fails closed', async () => {
    const sink = await FileAuditSink.open(dir);
    for (let i = 1; i <= 5; i++) await sink.append(sampleEvent(i));
    await flipByte(SEG1, (await jsonOffset(SEG1, 1)) + 30);
    const report = await sink.verify();
    expect(report.ok).toBe(false);
    expect(report.fault).toMatchObject({ segment: SEG1, record: 2 });
    expect(sink.health().ok).toBe(false);
    expect(sink.health().reason).toMatch(/damaged/);
    await expect(sink.append(sampleEvent(6))).rejects.toBeInstanceOf(AuditUnavailableError);
    await sink.close();
  });

  it('a same-length rewrite with recomputed SHA-256 passes only without HMAC', async () => {
    await writeTrail(5);
    const swapTenant = (seq: number, json: string) => (seq === 3 ? json.replace('"tenant":"acme"', '"tenant":"evil"') : json);
    await rewriteChain(dir, swapTenant, plainDigest);
    // Plain SHA-256 proves integrity against accidents, not against someone who can rewrite files.
    const sink = await FileAuditSink.open(dir);
    expect((await sink.verify()).ok).toBe(true);
    expect((await sink.tail({ limit: 10 }))[2]?.tenant).toBe('evil');
    await sink.close();
  });

  it('with HMAC the same rewrite (and one under a wrong key) is detected at the edited record', async () => {
    await writeTrail(5, { hmacKey: KEY });
    const sizeBefore = (await stat(join(dir, SEG1))).size;
    const swapTenant = (seq: number, json: string) => (seq === 3 ? json.replace('"tenant":"acme"', '"tenant":"evil"') : json);
    await rewriteChain(dir, (_seq, json) => json, hmacDigest(KEY));
    expect((await verifyAuditDirectory({ dir, hmacKey: KEY })).ok).toBe(true); // the helper rewrites faithfully

    await rewriteChain(dir, swapTenant, plainDigest);
    expect((await stat(join(dir, SEG1))).size).toBe(sizeBefore);
    const error = await openFails({ hmacKey: KEY });
    expect(error).toBeInstanceOf(AuditCorruptError);
    expect(error.message).toMatch(/record 1 \(seq 1\).*digest does not match/);

    await rewriteChain(dir, swapTenant, hmacDigest('a-different-key-of-the-attacker'));
    const wrongKey = await verifyAuditDirectory({ dir, hmacKey: KEY });
    expect(wrongKey.ok).toBe(false);
    expect(wrongKey.fault?.reason).toMatch(/digest does not match/);

    // Only the key holder can make a trail that verifies.
    await rewriteChain(dir, swapTenant, hmacDigest(KEY));
    expect((await verifyAuditDirectory({ dir, hmacKey: KEY })).ok).toBe(true);
  });

  it('refuses a trail with a deleted frame', async () => {
    await writeTrail(6);
    const [segment] = await readSegments(dir);
    segment!.frames.splice(2, 1);
    await writeSegments(dir, [segment!]);
    const error = await openFails();
    expect(error).toBeInstanceOf(AuditCorruptError);
    expect(error.message).toMatch(/record 3 \(seq 3\).*seq 4 where seq 3 was expected/);
  });

  it('refuses a trail with two frames swapped', async () => {
    await writeTrail(6);
    const [segment] = await readSegments(dir);
    const [a, b] = [segment!.frames[3]!, segment!.frames[4]!];
    segment!.frames[3] = b;
    segment!.frames[4] = a;
    await writeSegments(dir, [segment!]);
    const error = await openFails();
    expect(error.message).toMatch(/record 4 \(seq 4\).*seq 5 where seq 4 was expected/);
  });

  it('refuses a frame whose seq was edited consistently (digest recomputed) as a broken chain', async () => {
    await writeTrail(4);
    const [segment] = await readSegments(dir);
    const json = frameJson(segment!.frames[2]!).replace('"seq":3', '"seq":9');
    segment!.frames[2] = frameLine(json, plainDigest(json));
    await writeSegments(dir, [segment!]);
    expect((await openFails()).message).toMatch(/seq 9 where seq 3 was expected/);
  });

  it('refuses a frame whose prev was replaced', async () => {
    await writeTrail(4);
    const [segment] = await readSegments(dir);
    const json = frameJson(segment!.frames[2]!).replace(/"prev":"[0-9a-f]{64}"/, `"prev":"${'1'.repeat(64)}"`);
    segment!.frames[2] = frameLine(json, plainDigest(json));
    await writeSegments(dir, [segment!]);
    expect((await openFails()).message).toMatch(/record 3 .*prev is not the digest of the previous record/);
  });

  it('cuts a torn final frame, records a recovered event, and keeps every complete frame', async () => {
    await writeTrail(5);
    const path = join(dir, SEG1);
    const full = (await stat(path)).size;
    const lastStart = (await jsonOffset(SEG1, 4)) - 74;
    await truncate(path, lastStart + Math.floor((full - lastStart) / 2));

    const offline = await verifyAuditDirectory({ dir });
    expect(offline.ok).toBe(true);
    expect(offline.records).toBe(4);
    expect(offline.tornBytes).toBeGreaterThan(0);
    expect(formatAuditReport(offline)).toMatch(/partial frame/);

    const sink = await FileAuditSink.open(dir);
    const records = await sink.tail({ limit: 10 });
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(records[3]?.callId).toBe('call-4');
    expect(records[4]).toMatchObject({ event: 'recovered', seq: 5 });
    expect(records[4]?.detail).toMatch(/cut \d+ bytes of a partial frame after seq 4 at the end of audit-00000001\.log/);
    expect((await sink.append(sampleEvent(6))).seq).toBe(6);
    expect((await sink.verify()).ok).toBe(true);
    await sink.close();
  });

  it('cuts a torn tail that is only part of a frame prefix', async () => {
    await writeTrail(3);
    await appendFile(join(dir, SEG1), '0000012');
    const sink = await FileAuditSink.open(dir);
    expect((await sink.tail({ limit: 1 }))[0]).toMatchObject({ seq: 4, event: 'recovered' });
    await sink.close();
  });

  it('does not treat a damaged but complete final frame as torn', async () => {
    await writeTrail(3);
    await flipByte(SEG1, (await jsonOffset(SEG1, 2)) + 10);
    expect((await openFails()).message).toMatch(/record 3 .*digest does not match/);
  });

  it('refuses a truncated header', async () => {
    await writeTrail(3);
    const path = join(dir, SEG1);
    const text = await readFile(path, 'latin1');
    await writeFile(path, text.slice(0, 30), 'latin1');
    const error = await openFails();
    expect(error).toBeInstanceOf(AuditCorruptError);
    expect(error.message).toMatch(/audit-00000001\.log, header: the header line is damaged or truncated/);
  });

  it('refuses a damaged header line', async () => {
    await writeTrail(3);
    await flipByte(SEG1, 3);
    expect((await openFails()).message).toMatch(/header: the header line is damaged/);
  });

  it('refuses a symlinked segment and never follows it', async () => {
    await writeTrail(3);
    await rename(join(dir, SEG1), join(dir, 'elsewhere.log'));
    await symlink(join(dir, 'elsewhere.log'), join(dir, SEG1));
    const error = await openFails();
    expect(error.message).toMatch(/audit-00000001\.log is a symbolic link; refusing to follow it/);
    expect((await verifyAuditDirectory({ dir })).fault?.reason).toMatch(/symbolic link/);
  });

  it('refuses non-regular files under a segment name (a directory, a FIFO) without hanging', async () => {
    await writeTrail(3, { segmentBytes: 4096 });
    await rm(join(dir, SEG1));
    await mkdir(join(dir, SEG1));
    expect((await openFails()).message).toMatch(/audit-00000001\.log is not a regular file/);
    await rm(join(dir, SEG1), { recursive: true });
    execFileSync('mkfifo', [join(dir, SEG1)]);
    expect((await openFails()).message).toMatch(/audit-00000001\.log is not a regular file/);
  });

  it('refuses a trail with a segment removed from the middle or the start', async () => {
    await writeTrail(60, { segmentBytes: 4096 });
    const names = await segmentNames(dir);
    expect(names.length).toBeGreaterThanOrEqual(4);
    await unlink(join(dir, names[1]!));
    expect((await openFails()).message).toMatch(/segment audit-00000002\.log is missing/);
    // Renumbering the rest does not help: the headers chain segment to segment.
    for (let i = 2; i < names.length; i++) await rename(join(dir, names[i]!), join(dir, `audit-${String(i).padStart(8, '0')}.log`));
    expect((await openFails()).message).toMatch(/header names segment 3, not 2|header prev is not the digest/);
  });

  it('refuses a trail whose first segment was removed', async () => {
    await writeTrail(60, { segmentBytes: 4096 });
    await unlink(join(dir, SEG1));
    expect((await openFails()).message).toMatch(/segment audit-00000001\.log is missing/);
  });

  it('rotates at the size bound and chains segment headers to the previous segment', async () => {
    await writeTrail(80, { segmentBytes: 4096 });
    const segments = await readSegments(dir);
    expect(segments.length).toBeGreaterThan(3);
    let prev = GENESIS;
    for (const [i, segment] of segments.entries()) {
      expect((await stat(join(dir, segment.name))).size).toBeLessThanOrEqual(4096);
      expect(segment.header).toBe(`toolgate-audit/1 segment=${String(i + 1).padStart(8, '0')} alg=sha256 prev=${prev}`);
      prev = segment.frames[segment.frames.length - 1]!.slice(9, 73);
    }
    const report = await verifyAuditDirectory({ dir });
    expect(report).toMatchObject({ ok: true, records: 80, segments: segments.length });
    // Reopening continues the chain in the last segment.
    const sink = await FileAuditSink.open(dir, { segmentBytes: 4096 });
    const receipt = await sink.append(sampleEvent(81));
    expect(receipt.seq).toBe(81);
    const [last] = await sink.tail({ limit: 1 });
    expect(last?.prev).toBe(report.head?.digest);
    await sink.close();
  });

  it('allows one writer per directory', async () => {
    const first = await FileAuditSink.open(dir);
    const error = await FileAuditSink.open(dir).then(
      () => new Error('a second writer got in'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(AuditUnavailableError);
    expect(error.message).toMatch(new RegExp(`in use by another writer \\(pid ${process.pid}\\)`));
    await first.append(sampleEvent(1));
    await first.close();
    const second = await FileAuditSink.open(dir);
    expect((await second.append(sampleEvent(2))).seq).toBe(2);
    await second.close();
  });

  it('fails closed when the segment changes length behind the writer', async () => {
    const sink = await FileAuditSink.open(dir);
    await sink.append(sampleEvent(1));
    await appendFile(join(dir, SEG1), frameLine('{"seq":2}', plainDigest('{"seq":2}')) + '\n');
    await expect(sink.append(sampleEvent(2))).rejects.toThrow(/changed length behind the writer/);
    expect(sink.health()).toMatchObject({ ok: false, reason: expect.stringMatching(/second writer/) });
    await expect(sink.append(sampleEvent(3))).rejects.toThrow(/changed length/);
    await sink.close();
  });

  it('fails closed when the segment is replaced behind the writer', async () => {
    const sink = await FileAuditSink.open(dir);
    await sink.append(sampleEvent(1));
    const copy = join(dir, 'copy.log');
    await writeFile(copy, await readFile(join(dir, SEG1)));
    await rename(copy, join(dir, SEG1));
    await expect(sink.append(sampleEvent(2))).rejects.toThrow(/replaced or removed behind the writer/);
    await sink.close();
  });

  it('rolls back a write that fails part-way (full disk) and keeps accepting appends', async () => {
    let failNext = false;
    const io: AuditFileIo = {
      ...nodeAuditFileIo,
      write: async (handle, data, position) => {
        if (failNext) {
          failNext = false;
          await nodeAuditFileIo.write(handle, data.subarray(0, Math.ceil(data.length / 2)), position);
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
        return nodeAuditFileIo.write(handle, data, position);
      },
    };
    const sink = await FileAuditSink.open(dir, { io });
    for (let i = 1; i <= 3; i++) await sink.append(sampleEvent(i));
    const before = (await stat(join(dir, SEG1))).size;
    failNext = true;
    const failed = await Promise.allSettled([sink.append(sampleEvent(4)), sink.append(sampleEvent(5))]);
    for (const result of failed) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason.message).toMatch(/ENOSPC: no space left on device.*nothing was recorded/);
    }
    expect((await stat(join(dir, SEG1))).size).toBe(before);
    expect(sink.health()).toEqual({ ok: true });
    expect((await sink.append(sampleEvent(6))).seq).toBe(4);
    expect(await sink.verify()).toMatchObject({ ok: true, records: 4 });
    await sink.close();
    const reopened = await FileAuditSink.open(dir);
    expect((await reopened.tail({ limit: 10 })).map((r) => r.callId)).toEqual(['call-1', 'call-2', 'call-3', 'call-6']);
    await reopened.close();
  });

  it('rolls back a failed header write during rotation and keeps accepting appends', async () => {
    let failHeader = false;
    const io: AuditFileIo = {
      ...nodeAuditFileIo,
      write: async (handle, data, position) => {
        if (failHeader && position === 0) {
          failHeader = false;
          throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
        }
        return nodeAuditFileIo.write(handle, data, position);
      },
    };
    const sink = await FileAuditSink.open(dir, { io, segmentBytes: 4096 });
    let seq = 0;
    while ((await segmentNames(dir)).length === 1) seq = (await sink.append(sampleEvent(seq + 1))).seq;
    failHeader = true;
    let rejected = 0;
    for (let i = 0; i < 40; i++) {
      try {
        seq = (await sink.append(sampleEvent(seq + 1))).seq;
      } catch (error) {
        expect((error as Error).message).toMatch(/could not start a new segment \(ENOSPC/);
        rejected += 1;
      }
    }
    expect(rejected).toBe(1);
    expect(sink.health().ok).toBe(true);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(await sink.verify()).toMatchObject({ ok: true, records: seq });
    await sink.close();
  });

  it('after a failed fdatasync refuses every later append until restart', async () => {
    let failSync = false;
    const io: AuditFileIo = {
      ...nodeAuditFileIo,
      datasync: async (handle) => {
        if (failSync) {
          failSync = false;
          throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        }
        return nodeAuditFileIo.datasync(handle);
      },
    };
    const sink = await FileAuditSink.open(dir, { io });
    await sink.append(sampleEvent(1));
    failSync = true;
    await expect(sink.append(sampleEvent(2))).rejects.toThrow(/fdatasync of the audit trail failed \(EIO: input\/output error\)/);
    expect(sink.health()).toMatchObject({ ok: false, reason: expect.stringMatching(/refused until restart/) });
    // The disk works again, but the sink cannot know what the failed sync lost.
    await expect(sink.append(sampleEvent(3))).rejects.toBeInstanceOf(AuditUnavailableError);
    await sink.close();
    const restarted = await FileAuditSink.open(dir);
    expect((await restarted.verify()).ok).toBe(true);
    const receipt = await restarted.append(sampleEvent(4));
    expect(receipt.seq).toBeGreaterThanOrEqual(2);
    await restarted.close();
  });

  it('refuses a keyed trail without its key, with another key, and a plain trail with a key', async () => {
    await writeTrail(2, { hmacKey: KEY });
    expect((await openFails()).message).toMatch(/keyed with HMAC-SHA-256 \(key id [0-9a-f]{16}\); the HMAC key is needed/);
    expect((await openFails({ hmacKey: 'another-key-entirely-0123456789' })).message).toMatch(/is not the trail's key/);
    expect((await verifyAuditDirectory({ dir })).fault?.reason).toMatch(/HMAC key is needed/);
    const ok = await verifyAuditDirectory({ dir, hmacKey: KEY });
    expect(ok).toMatchObject({ ok: true, records: 2, algorithm: 'hmac-sha256' });
    expect(formatAuditReport(ok)).toMatch(/audit trail OK: 2 records in 1 segment verified \(HMAC-SHA-256, key id [0-9a-f]{16}\)/);

    await cleanup();
    ({ dir, cleanup } = await tempRoot('audit-hostile'));
    await writeTrail(2);
    expect((await openFails({ hmacKey: KEY })).message).toMatch(/plain SHA-256 but an HMAC key was given/);
    await expect(FileAuditSink.open(dir, { hmacKey: 'short' })).rejects.toThrow(/at least 16 bytes/);
  });

  it('an anchor receipt exposes records cut cleanly from the end', async () => {
    const sink = await FileAuditSink.open(dir);
    let anchor = await sink.append(sampleEvent(1));
    for (let i = 2; i <= 5; i++) anchor = await sink.append(sampleEvent(i));
    await sink.close();
    const [segment] = await readSegments(dir);
    segment!.frames.splice(3);
    await writeSegments(dir, [segment!]);
    // A chain alone cannot show a clean cut at its end...
    expect((await verifyAuditDirectory({ dir })).ok).toBe(true);
    // ...a receipt kept elsewhere can.
    const report = await verifyAuditDirectory({ dir, anchor });
    expect(report.ok).toBe(false);
    expect(report.fault?.reason).toMatch(/ends at seq 3, before the anchor seq 5: records were cut from its end/);
  });

  it('a running writer notices records cut from the end of its trail', async () => {
    const sink = await FileAuditSink.open(dir);
    for (let i = 1; i <= 4; i++) await sink.append(sampleEvent(i));
    const text = await readFile(join(dir, SEG1), 'latin1');
    await writeFile(join(dir, SEG1), text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1), 'latin1');
    const report = await sink.verify();
    expect(report.ok).toBe(false);
    expect(report.fault?.reason).toMatch(/shorter .* than the writer committed/);
    await sink.close();
  });

  it('removes the leftover of an interrupted rotation, and refuses a leftover that holds data', async () => {
    await writeTrail(3);
    const [segment] = await readSegments(dir);
    const header = `toolgate-audit/1 segment=00000002 alg=sha256 prev=${segment!.frames[2]!.slice(9, 73)}\n`;
    await writeFile(join(dir, 'audit-00000002.log.tmp'), header.slice(0, 50));
    const sink = await FileAuditSink.open(dir);
    expect(await readdir(dir)).not.toContain('audit-00000002.log.tmp');
    await sink.close();
    await writeFile(join(dir, 'audit-00000002.log.tmp'), header + segment!.frames[0] + '\n');
    expect((await openFails()).message).toMatch(/audit-00000002\.log\.tmp holds data after its header/);
  });

  it('reports an empty or missing directory as nothing to verify', async () => {
    expect((await verifyAuditDirectory({ dir })).fault?.reason).toMatch(/no audit directory/);
    await mkdir(dir, { recursive: true });
    expect((await verifyAuditDirectory({ dir })).fault?.reason).toMatch(/holds no audit segments/);
  });

  it('verifies segments larger than one read chunk, frames straddling chunk boundaries included', async () => {
    const sink = await FileAuditSink.open(dir, { segmentBytes: 8 * 1024 * 1024 });
    let n = 0;
    // ~3.5 MiB of frames of varied sizes, some near the 64 KiB cap, so boundaries fall everywhere.
    for (let wave = 0; wave < 12; wave++) {
      await Promise.all(
        Array.from({ length: 400 }, () => {
          n += 1;
          return sink.append(sampleEvent(n, { detail: 'd'.repeat((n * 7919) % 1500), ...(n % 997 === 0 ? { repaired: Array.from({ length: 30 }, () => 'r'.repeat(2000)) } : {}) }));
        }),
      );
    }
    await sink.close();
    const path = join(dir, SEG1);
    const size = (await stat(path)).size;
    expect(size).toBeGreaterThan(3 * 1024 * 1024);
    expect(await verifyAuditDirectory({ dir })).toMatchObject({ ok: true, records: n, tornBytes: 0 });

    // The frame that contains byte 1 MiB (the first chunk boundary) and its position in the segment.
    const text = await readFile(path, 'latin1');
    const boundary = 1024 * 1024;
    let start = text.indexOf('\n') + 1;
    let record = 1;
    while (text.indexOf('\n', start) < boundary) {
      start = text.indexOf('\n', start) + 1;
      record += 1;
    }
    expect(start).toBeLessThan(boundary);
    const bytes = await readFile(path);
    bytes[boundary + 5] = (bytes[boundary + 5] as number) ^ 0x01;
    await writeFile(path, bytes);
    const damaged = await verifyAuditDirectory({ dir });
    expect(damaged.ok).toBe(false);
    expect(damaged.fault).toMatchObject({ segment: SEG1, record, seq: record });
    expect(damaged.fault?.reason).toContain(`at byte ${start}:`);
    expect(damaged.records).toBe(record - 1);

    // Undo, then tear the last frame: still ok, with the torn bytes reported.
    bytes[boundary + 5] = (bytes[boundary + 5] as number) ^ 0x01;
    await writeFile(path, bytes.subarray(0, size - 40));
    const torn = await verifyAuditDirectory({ dir });
    expect(torn).toMatchObject({ ok: true, records: n - 1 });
    expect(torn.tornBytes).toBeGreaterThan(40);
  });

  it('keeps the chain across close and reopen', async () => {
    await writeTrail(3);
    const sink = await FileAuditSink.open(dir);
    const receipt = await sink.append(sampleEvent(4));
    const records = await sink.tail({ limit: 10 });
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(records[3]?.prev).toBe(records[2]?.digest);
    expect(records[3]?.digest).toBe(receipt.digest);
    await sink.close();
  });
});

describe('FileAuditSink open errors', () => {
  it('reports an unusable directory without naming host paths', async () => {
    const { dir: base, cleanup: done } = await tempRoot('audit-open');
    try {
      await mkdir(join(base, '..', 'blocker'), { recursive: true });
      await writeFile(join(base, '..', 'blocker', 'audit'), 'a file, not a directory');
      const error = await FileAuditSink.open(join(base, '..', 'blocker', 'audit')).then(
        () => new Error('opened a file as a directory'),
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(AuditUnavailableError);
      expect(error.message).toMatch(/the audit (directory|path) audit (cannot be created or read \(EEXIST|ENOTDIR|is not a directory)/);
      expect(error.message).not.toContain(base);
    } finally {
      await done();
    }
  });
});
