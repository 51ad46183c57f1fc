import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testAuditSink } from '@toolgate/testing';
import { afterAll, describe } from 'vitest';
import { FileAuditSink } from '../src/index.js';

const dirs: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-audit-contract-'));
  dirs.push(dir);
  return join(dir, 'audit');
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('FileAuditSink (plain SHA-256)', () => {
  testAuditSink({ open: async () => FileAuditSink.open(await freshDir()) });
});

describe('FileAuditSink (HMAC-SHA-256, small segments)', () => {
  const hmacKey = 'contract-suite-hmac-key-0123456789';
  // Small segments so the suite also runs across rotations.
  testAuditSink({ hmacKey, open: async () => FileAuditSink.open(await freshDir(), { hmacKey, segmentBytes: 4096 }) });
});
