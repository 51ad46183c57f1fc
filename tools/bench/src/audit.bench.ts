import { createHash, hash } from 'node:crypto';
import { mkdtemp, open, readdir, readFile, rm, stat, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileAuditSink, verifyAuditDirectory } from '@toolgate/adapter-audit-file';
import type { AuditEvent } from '@toolgate/contracts';
import { target, type BenchLine } from './targets.js';

/**
 * Audit trail benchmark, in one process, against baselines measured in the same run on the same
 * disk:
 *  - durable appends/s of the file sink with 1 and with 64 concurrent writers, against the raw
 *    rate of small write + fdatasync on a file in the same directory (target: 64 writers reach
 *    at least 10x the single-writer rate, which group commit makes possible);
 *  - verify throughput (MB/s) against node's SHA-256 over the same bytes, both as one stream per
 *    segment and frame by frame as the format requires (target: at least 0.7).
 */
export async function bench(): Promise<BenchLine[]> {
  const root = await mkdtemp(join(tmpdir(), 'toolgate-audit-bench-'));
  try {
    const lines: BenchLine[] = [];
    const { raw, single, many } = await appendRates(root);
    lines.push(`audit: raw write+fdatasync         ${fmt(raw)} ops/s (baseline, same directory)`);
    lines.push(`audit: durable appends, 1 writer    ${fmt(single.rate)} appends/s (${(single.rate / raw).toFixed(2)}x raw fdatasync)`);
    lines.push(
      `audit: durable appends, 64 writers  ${fmt(many.rate)} appends/s (${(many.rate / single.rate).toFixed(1)}x 1 writer; ` +
        `${(many.rate / raw).toFixed(1)}x raw fdatasync; ${fmt(many.appends / Math.max(1, many.batches))} appends per fdatasync)`,
    );
    lines.push(target('durable appends, 64 writers vs 1 writer', many.rate / single.rate, '>=', 10, 'x', 1));

    const verify = await verifyThroughput(join(root, 'verify'));
    lines.push(`audit: verify                       ${fmt(verify.verifyMBps)} MB/s over ${verify.records} records, ${fmt(verify.bytes / 1e6)} MB in ${verify.segments} segments`);
    lines.push(`audit: raw SHA-256 per frame        ${fmt(verify.perFrameMBps)} MB/s (same frames) -> verify ratio ${(verify.verifyMBps / verify.perFrameMBps).toFixed(2)}`);
    lines.push(target('verify vs raw SHA-256 per frame', verify.verifyMBps / verify.perFrameMBps, '>=', 0.7));
    lines.push(`audit: raw SHA-256 streamed         ${fmt(verify.streamMBps)} MB/s (whole segments) -> verify ratio ${(verify.verifyMBps / verify.streamMBps).toFixed(2)}`);
    return lines;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toString() : n.toFixed(1);
}

function event(i: number): AuditEvent {
  return {
    event: i % 4 === 0 ? 'denied' : 'authorized',
    ts: new Date().toISOString(),
    callId: `call-${i}-${Math.random().toString(36).slice(2, 10)}`,
    tenant: 'acme',
    principal: `agent-${i % 16}`,
    tool: 'web_search',
    version: '1.2.0',
    gate: i % 4 === 0 ? 'allow' : 'audit',
    ...(i % 4 === 0 ? { code: 'TOOL_NOT_ALLOWED' as const } : {}),
    argsDigest: `sha256:${hash('sha256', String(i), 'hex')}`,
  };
}

interface Rate {
  rate: number;
  appends: number;
  batches: number;
}

/**
 * The three append measurements, interleaved in rounds so that a disk shared with other work
 * slows all three alike: raw write + fdatasync, one writer, and 64 concurrent writers.
 */
async function appendRates(root: string): Promise<{ raw: number; single: Rate; many: Rate }> {
  const handle = await open(join(root, 'raw-fdatasync.bin'), 'w');
  const record = Buffer.alloc(300, 0x61);
  record[299] = 0x0a;
  let position = 0;
  const rawLoop = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      await handle.write(record, 0, record.length, position);
      position += record.length;
      await handle.datasync();
    }
  };
  let batches = 0;
  const countingIo = {
    write: async (h: FileHandle, data: Uint8Array, at: number) => (await h.write(data, 0, data.length, at)).bytesWritten,
    datasync: async (h: FileHandle) => {
      batches += 1;
      await h.datasync();
    },
    truncate: (h: FileHandle, length: number) => h.truncate(length),
  };
  const one = await FileAuditSink.open(join(root, 'w1'), { io: countingIo });
  const sixtyFour = await FileAuditSink.open(join(root, 'w64'), { io: countingIo });
  const totals = { raw: { ops: 0, seconds: 0 }, single: { appends: 0, seconds: 0, batches: 0 }, many: { appends: 0, seconds: 0, batches: 0 } };
  try {
    // Warm up the JIT and both files.
    await rawLoop(10);
    for (let i = 0; i < 10; i++) await one.append(event(i));
    await Promise.all(Array.from({ length: 64 }, (_, i) => sixtyFour.append(event(i))));
    for (let round = 0; round < 5; round++) {
      let started = performance.now();
      await rawLoop(60);
      totals.raw.ops += 60;
      totals.raw.seconds += (performance.now() - started) / 1000;

      batches = 0;
      started = performance.now();
      for (let i = 0; i < 60; i++) await one.append(event(i));
      totals.single.seconds += (performance.now() - started) / 1000;
      totals.single.appends += 60;
      totals.single.batches += batches;

      batches = 0;
      started = performance.now();
      await Promise.all(
        Array.from({ length: 64 }, async (_, w) => {
          for (let i = 0; i < 10; i++) await sixtyFour.append(event(w * 10 + i));
        }),
      );
      totals.many.seconds += (performance.now() - started) / 1000;
      totals.many.appends += 640;
      totals.many.batches += batches;
    }
  } finally {
    await handle.close();
    await one.close();
    await sixtyFour.close();
  }
  const rate = (t: { appends: number; seconds: number; batches: number }): Rate => ({ rate: t.appends / t.seconds, appends: t.appends, batches: t.batches });
  return { raw: totals.raw.ops / totals.raw.seconds, single: rate(totals.single), many: rate(totals.many) };
}

/** Builds a ~40 MB trail (three segments), then times verification against raw hashing. */
async function verifyThroughput(dir: string) {
  const sink = await FileAuditSink.open(dir);
  const targetBytes = 40 * 1024 * 1024;
  let written = 0;
  let i = 0;
  try {
    while (written < targetBytes) {
      // One wave of 1000 concurrent appends is one group commit.
      await Promise.all(Array.from({ length: 1000 }, () => sink.append(event(i++))));
      written = 0;
      for (const name of await readdir(dir)) if (name.endsWith('.log')) written += (await stat(join(dir, name))).size;
    }
  } finally {
    await sink.close();
  }

  const names = (await readdir(dir)).filter((n) => /^audit-\d+\.log$/.test(n)).sort();
  const files = await Promise.all(names.map((n) => readFile(join(dir, n))));
  const bytes = files.reduce((sum, f) => sum + f.length, 0);
  // The JSON spans a verifier must hash: everything after `<len>:<digest>:` up to the newline.
  const spans: { file: Buffer; start: number; end: number }[] = [];
  for (const file of files) {
    let at = file.indexOf(0x0a) + 1;
    while (at < file.length) {
      const end = file.indexOf(0x0a, at);
      spans.push({ file, start: at + 74, end });
      at = end + 1;
    }
  }

  // Interleaved rounds, best of each: on a shared machine, load then hits all three alike.
  let records = 0;
  const runs: Record<'verify' | 'stream' | 'perFrame', () => unknown | Promise<unknown>> = {
    verify: async () => {
      const report = await verifyAuditDirectory({ dir });
      if (!report.ok) throw new Error(`benchmark trail does not verify: ${report.fault?.reason}`);
      records = report.records;
    },
    stream: () => {
      for (const file of files) createHash('sha256').update(file).digest('hex');
    },
    // The least any verifier of this format does: hash each frame's JSON where it lies in memory.
    perFrame: () => {
      for (const { file, start, end } of spans) hash('sha256', file.subarray(start, end), 'hex');
    },
  };
  const fastest = { verify: Infinity, stream: Infinity, perFrame: Infinity };
  for (let round = 0; round < 9; round++) {
    for (const name of ['verify', 'stream', 'perFrame'] as const) {
      const started = performance.now();
      await runs[name]();
      // Round 0 warms up the JIT and the page cache.
      if (round > 0) fastest[name] = Math.min(fastest[name], (performance.now() - started) / 1000);
    }
  }
  const [verifySeconds, streamSeconds, perFrameSeconds] = [fastest.verify, fastest.stream, fastest.perFrame];
  const mb = bytes / 1e6;
  return {
    records,
    bytes,
    segments: names.length,
    verifyMBps: mb / verifySeconds,
    streamMBps: mb / streamSeconds,
    perFrameMBps: mb / perFrameSeconds,
  };
}
