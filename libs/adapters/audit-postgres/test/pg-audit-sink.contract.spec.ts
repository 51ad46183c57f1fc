import { createTestDatabase, testAuditSink, type TestDatabase } from '@toolgate/testing';
import { afterAll, describe, inject } from 'vitest';
import { PgAuditSink } from '../src/index.js';

const databases: TestDatabase[] = [];
async function freshDatabase(): Promise<string> {
  const db = await createTestDatabase(inject('toolgatePostgresUrl'));
  databases.push(db);
  return db.url;
}
afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

describe('PgAuditSink (plain SHA-256)', () => {
  testAuditSink({ open: async () => PgAuditSink.open(await freshDatabase()) });
});

describe('PgAuditSink (HMAC-SHA-256, small batches)', () => {
  const hmacKey = 'contract-suite-hmac-key-0123456789';
  testAuditSink({ hmacKey, open: async () => PgAuditSink.open(await freshDatabase(), { hmacKey, maxBatchFrames: 16 }) });
});
