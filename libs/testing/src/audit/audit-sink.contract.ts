import type { AuditEvent, AuditRecord, AuditSink } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { SPEC_FIELD_ORDER, SPEC_GENESIS, specFrameDigest, specFrameJson } from './reference-frame.js';

/** How the contract suite gets sinks of one adapter. */
export interface AuditSinkFixture {
  /** Opens a sink over a fresh, empty trail (a new directory, a new database). */
  open(): Promise<AuditSink>;
  /** The HMAC key the sinks are opened with, if any, so digests can be checked independently. */
  readonly hmacKey?: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

function event(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    event: 'authorized',
    ts: '2025-03-01T12:00:00.000Z',
    tenant: 'acme',
    principal: 'alice',
    tool: 'web_search',
    version: '1.0.0',
    gate: 'audit',
    argsDigest: `sha256:${'ab'.repeat(32)}`,
    callId: 'call-1',
    ...overrides,
  };
}

/** Checks that `records` (contiguous by seq) chain to each other and carry spec digests. */
function expectChained(records: readonly AuditRecord[], hmacKey: string | undefined): void {
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as AuditRecord;
    expect(record.digest).toMatch(HEX64);
    expect(record.digest).toBe(specFrameDigest(record, hmacKey));
    if (i > 0) {
      const before = records[i - 1] as AuditRecord;
      expect(record.seq).toBe(before.seq + 1);
      expect(record.prev).toBe(before.digest);
    } else if (record.seq === 1) {
      expect(record.prev).toBe(SPEC_GENESIS);
    }
  }
}

/**
 * The contract every `AuditSink` adapter passes (run it from the adapter's own spec file): durable
 * appends with gap-free seqs under concurrency, receipts that match what `tail` returns, the
 * documented frame digest and chain, paging and filters, verification, redaction of secrets in
 * every field, refusal of malformed events, health and close.
 */
export function testAuditSink(fixture: AuditSinkFixture): void {
  const withSink = async (body: (sink: AuditSink) => Promise<void>): Promise<void> => {
    const sink = await fixture.open();
    try {
      await body(sink);
    } finally {
      await sink.close();
    }
  };

  describe('AuditSink contract', () => {
    it('acknowledges appends with receipts: seq 1, 2, 3 and a 64-hex digest', () =>
      withSink(async (sink) => {
        const receipts = [];
        for (let i = 0; i < 3; i++) receipts.push(await sink.append(event({ callId: `c${i}` })));
        expect(receipts.map((r) => r.seq)).toEqual([1, 2, 3]);
        for (const r of receipts) expect(r.digest).toMatch(HEX64);
        expect(new Set(receipts.map((r) => r.digest)).size).toBe(3);
      }));

    it('tail returns every member of the event, chained from the genesis value, with the receipt digests', () =>
      withSink(async (sink) => {
        const full: AuditEvent = event({
          event: 'succeeded',
          code: 'TIMEOUT',
          gate: 'execute',
          durationMs: 12.5,
          approvedBy: 'bob',
          approvalReason: 'approval:apr-1',
          repaired: ['renamed /q to /query', 'coerced /max_results to a number'],
          detail: 'ran to completion',
        });
        const a = await sink.append(event());
        const b = await sink.append(full);
        const records = await sink.tail({ limit: 10 });
        expect(records).toHaveLength(2);
        const [first, second] = records as [AuditRecord, AuditRecord];
        expect(first).toEqual({ ...event(), seq: 1, prev: SPEC_GENESIS, digest: a.digest });
        expect(second).toEqual({ ...full, seq: 2, prev: a.digest, digest: b.digest });
        for (const key of Object.keys(second)) expect([...SPEC_FIELD_ORDER, 'digest']).toContain(key);
        expectChained(records, fixture.hmacKey);
      }));

    it('stores approval requests and decisions with their approval id', () =>
      withSink(async (sink) => {
        const requested = event({ event: 'approval_requested', gate: undefined, approvalId: 'apr-7', detail: 'pending until 2025-03-01T12:15:00.000Z' });
        const decided = event({
          event: 'approval_decided',
          gate: undefined,
          principal: 'carol',
          approvalId: 'apr-7',
          approvedBy: 'carol',
          approvalReason: 'looks fine',
          detail: 'approved',
        });
        await sink.append(requested);
        await sink.append(decided);
        const records = await sink.tail({ limit: 10 });
        expect(records.map((r) => [r.event, r.approvalId, r.principal])).toEqual([
          ['approval_requested', 'apr-7', 'alice'],
          ['approval_decided', 'apr-7', 'carol'],
        ]);
        expectChained(records, fixture.hmacKey);
        expect(await sink.verify()).toMatchObject({ ok: true, records: 2 });
      }));

    it('stores the standing grants a call used, and still chains frames without them (ADR 0022)', () =>
      withSink(async (sink) => {
        const before = event();
        const authorized = event({ callId: 'call-2', grants: ['exec:*', 'network:api.example.com'] });
        const succeeded = event({ event: 'succeeded', gate: undefined, callId: 'call-2', durationMs: 4, grants: ['exec:*', 'network:api.example.com'] });
        const a = await sink.append(before);
        await sink.append(authorized);
        await sink.append(succeeded);
        const records = await sink.tail({ limit: 10 });
        expect(records.map((r) => r.grants)).toEqual([undefined, ['exec:*', 'network:api.example.com'], ['exec:*', 'network:api.example.com']]);
        // A frame without the member is what it was before the member existed.
        expect(records[0]).toEqual({ ...before, seq: 1, prev: SPEC_GENESIS, digest: a.digest });
        expectChained(records, fixture.hmacKey);
        expect(await sink.verify()).toMatchObject({ ok: true, records: 3 });
      }));

    it('stores the issuer of a caller\'s token last in the frame, and redacts it like any string (ADR 0074)', () =>
      withSink(async (sink) => {
        const issuer = 'https://id.example.com/realms/agents';
        await sink.append(event({ callId: 'call-3', issuer }));
        await sink.append(event({ callId: 'call-4', issuer: 'https://id.example.com/?token=sk-live-0123456789abcdefghijklmn' }));
        const records = await sink.tail({ limit: 10 });
        expect(records[0]!.issuer).toBe(issuer);
        expect(records[1]!.issuer).not.toContain('sk-live-0123456789abcdefghijklmn');
        expect(specFrameJson(records[0]!).endsWith(`"issuer":"${issuer}"}`)).toBe(true);
        expectChained(records, fixture.hmacKey);
        expect(await sink.verify()).toMatchObject({ ok: true, records: 2 });
      }));

    it('gives 200 concurrent appends gap-free, monotonic seqs whose receipts match the trail', () =>
      withSink(async (sink) => {
        const receipts = await Promise.all(
          Array.from({ length: 200 }, (_, i) => sink.append(event({ callId: `call-${i}`, principal: `p${i % 7}` }))),
        );
        expect(receipts.map((r) => r.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
        const records = await sink.tail({ limit: 500 });
        expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
        expectChained(records, fixture.hmacKey);
        const bySeq = new Map(records.map((r) => [r.seq, r]));
        receipts.forEach((receipt, i) => {
          const record = bySeq.get(receipt.seq);
          expect(record?.digest).toBe(receipt.digest);
          // Each caller's receipt names its own event, not a neighbour's.
          expect(record?.callId).toBe(`call-${i}`);
        });
        const report = await sink.verify();
        expect(report).toMatchObject({ ok: true, records: 200 });
      }));

    it('tail pages the newest records, oldest first, after a seq and up to a limit', () =>
      withSink(async (sink) => {
        for (let i = 1; i <= 12; i++) await sink.append(event({ callId: `c${i}` }));
        expect((await sink.tail({ limit: 5 })).map((r) => r.seq)).toEqual([8, 9, 10, 11, 12]);
        expect((await sink.tail({ limit: 5, afterSeq: 9 })).map((r) => r.seq)).toEqual([10, 11, 12]);
        expect((await sink.tail({ limit: 100, afterSeq: 0 })).map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
        expect(await sink.tail({ limit: 5, afterSeq: 12 })).toEqual([]);
        await expect(sink.tail({ limit: 0 })).rejects.toThrow(/limit/);
      }));

    it('tail filters by tenant and by principal', () =>
      withSink(async (sink) => {
        const plan: [string, string][] = [
          ['acme', 'alice'],
          ['acme', 'bob'],
          ['globex', 'alice'],
          ['acme', 'alice'],
          ['globex', 'carol'],
          ['acme', 'bob'],
        ];
        for (const [tenant, principal] of plan) await sink.append(event({ tenant, principal }));
        const acme = await sink.tail({ tenant: 'acme', limit: 100 });
        expect(acme.map((r) => r.seq)).toEqual([1, 2, 4, 6]);
        expect(acme.every((r) => r.tenant === 'acme')).toBe(true);
        const acmeAlice = await sink.tail({ tenant: 'acme', principal: 'alice', limit: 100 });
        expect(acmeAlice.map((r) => r.seq)).toEqual([1, 4]);
        expect((await sink.tail({ principal: 'alice', limit: 100 })).map((r) => r.seq)).toEqual([1, 3, 4]);
        expect((await sink.tail({ tenant: 'acme', limit: 2 })).map((r) => r.seq)).toEqual([4, 6]);
        expect((await sink.tail({ tenant: 'globex', afterSeq: 3, limit: 10 })).map((r) => r.seq)).toEqual([5]);
        expect(await sink.tail({ tenant: 'initech', limit: 10 })).toEqual([]);
      }));

    it('verify reports ok with the number of records', () =>
      withSink(async (sink) => {
        const empty = await sink.verify();
        expect(empty.ok).toBe(true);
        expect(empty.records).toBe(0);
        for (let i = 0; i < 25; i++) await sink.append(event({ callId: `c${i}` }));
        const report = await sink.verify();
        expect(report.ok).toBe(true);
        expect(report.records).toBe(25);
        expect(report.fault).toBeUndefined();
      }));

    it('redacts secrets in every string member before they are stored', () =>
      withSink(async (sink) => {
        const secrets = ['abc.def', 'sk-proj-Abcdefghijklmnop123', 'hunter2', 'AKqwerty98765', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 's3cr3tpw'];
        const leaky = {
          event: 'failed',
          ts: '2025-03-01T12:00:00.000Z',
          callId: 'call Bearer abc.def',
          tenant: 'acme password=hunter2',
          principal: 'alice api_key: AKqwerty98765',
          tool: 'tool sk-proj-Abcdefghijklmnop123',
          version: '1.0.0 token=hunter2',
          gate: 'execute Authorization: Bearer abc.def',
          code: 'EXECUTION_FAILED secret=hunter2',
          argsDigest: 'sha256:00 ghp_abcdefghijklmnopqrstuvwxyz0123456789',
          approvedBy: 'bob {"password":"hunter2"}',
          approvalReason: 'because Bearer abc.def',
          repaired: ['renamed /q', 'api-key=AKqwerty98765', 'url https://u:s3cr3tpw@example.com/x'],
          detail: 'upstream said: invalid api_key: sk-proj-Abcdefghijklmnop123 for password=hunter2',
        } as unknown as AuditEvent;
        await sink.append(leaky);
        const [record] = await sink.tail({ limit: 1 });
        const stored = JSON.stringify(record);
        for (const secret of secrets) expect(stored).not.toContain(secret);
        expect(stored).toContain('[REDACTED]');
        // What is not a secret survives.
        expect(record?.tenant).toBe('acme password=[REDACTED]');
        expect(record?.detail).toContain('upstream said: invalid api_key: [REDACTED]');
        expect(record?.repaired?.[0]).toBe('renamed /q');
        expect(record?.digest).toBe(specFrameDigest(record as AuditRecord, fixture.hmacKey));
        expect((await sink.verify()).ok).toBe(true);
      }));

    it('never stores members outside AuditEvent, such as raw arguments', () =>
      withSink(async (sink) => {
        await sink.append({ ...event(), args: { query: 'private thing' }, token: 'x' } as unknown as AuditEvent);
        const [record] = await sink.tail({ limit: 1 });
        expect(record).not.toHaveProperty('args');
        expect(record).not.toHaveProperty('token');
        expect(JSON.stringify(record)).not.toContain('private thing');
      }));

    it('refuses malformed events with a clear error and keeps the chain gap-free', () =>
      withSink(async (sink) => {
        await expect(sink.append({ ...event(), event: 'bogus' } as unknown as AuditEvent)).rejects.toThrow(/event kind/);
        await expect(sink.append({ ...event(), ts: 'yesterday' })).rejects.toThrow(/ts/);
        await expect(sink.append({ ...event(), durationMs: -1 })).rejects.toThrow(/durationMs/);
        await expect(sink.append({ ...event(), tenant: 42 } as unknown as AuditEvent)).rejects.toThrow(/tenant/);
        await expect(sink.append({ ...event(), repaired: 'x' } as unknown as AuditEvent)).rejects.toThrow(/repaired/);
        const receipt = await sink.append(event());
        expect(receipt.seq).toBe(1);
        expect((await sink.verify()).ok).toBe(true);
      }));

    it('caps very long strings instead of refusing the event', () =>
      withSink(async (sink) => {
        const receipt = await sink.append(event({ detail: 'x'.repeat(200_000), repaired: Array.from({ length: 500 }, (_, i) => `r${i}`) }));
        const [record] = await sink.tail({ limit: 1 });
        expect(record?.seq).toBe(receipt.seq);
        expect(record?.detail?.length).toBeLessThan(5000);
        expect(record?.detail).toMatch(/truncated\]$/);
        expect(record?.repaired?.length).toBeLessThan(100);
        expect((await sink.verify()).ok).toBe(true);
      }));

    it('reports healthy while open; after close it refuses appends and close is idempotent', async () => {
      const sink = await fixture.open();
      expect(sink.health()).toEqual({ ok: true });
      await sink.append(event());
      await sink.close();
      expect(sink.health().ok).toBe(false);
      expect(sink.health().reason).toMatch(/closed/);
      await expect(sink.append(event())).rejects.toThrow(/closed/);
      await sink.close();
    });

    it('close waits for appends already accepted', async () => {
      const sink = await fixture.open();
      const pending = Array.from({ length: 20 }, (_, i) => sink.append(event({ callId: `c${i}` })));
      await sink.close();
      const receipts = await Promise.all(pending);
      expect(receipts.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });
  });
}
