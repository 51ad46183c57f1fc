import type { ApprovalRecord, ApprovalStore, JsonObject, NewApproval } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { freshTenant, HOSTILE_STRINGS, useStore, type StoreFactory } from './store-under-test.js';

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;

/**
 * The behaviour every `ApprovalStore` adapter must share. Run it from each adapter's spec:
 * `describe('sqlite', () => testApprovalStore(async () => ({ store, close })))`.
 */
export function testApprovalStore(open: StoreFactory<ApprovalStore>): void {
  const opened = useStore(open);
  const store = () => opened.current();
  let counter = 0;
  const newApproval = (tenant: string, overrides: Partial<NewApproval> = {}): NewApproval => ({
    id: `appr-${++counter}-${Math.random().toString(36).slice(2)}`,
    tenant,
    requester: 'alice',
    tool: 'shell.exec',
    version: '1.0.0',
    args: { command: 'ls', flags: ['-l', '-a'], depth: 2 },
    payloadDigest: `sha256:${'ab'.repeat(32)}`,
    createdAt: T0,
    expiresAt: T0 + HOUR,
    ...overrides,
  });
  const approve = (at = T0 + 1, by = 'bob') => ({ approve: true, by, selfApproved: false, at });
  const approved = async (tenant: string, overrides: Partial<NewApproval> = {}): Promise<ApprovalRecord> => {
    const created = await store().create(newApproval(tenant, overrides));
    const decided = await store().decide(tenant, created.id, approve(created.createdAt + 1));
    if (!decided.ok) throw new Error(`setup could not approve: ${decided.problem}`);
    return decided.record;
  };

  describe('create and get', () => {
    it('stores a pending approval with exactly the given fields and no decision', async () => {
      const tenant = freshTenant();
      const input = newApproval(tenant);
      const created = await store().create(input);
      expect(created).toEqual({ ...input, status: 'pending' });
      for (const field of ['decidedBy', 'decidedAt', 'reason', 'selfApproved', 'consumedAt'] as const) {
        expect(created[field]).toBeUndefined();
      }
      expect(await store().get(tenant, input.id)).toEqual(created);
    });

    it('ignores a status smuggled into the new approval', async () => {
      const tenant = freshTenant();
      const input = { ...newApproval(tenant), status: 'approved', decidedBy: 'mallory' } as unknown as NewApproval;
      const created = await store().create(input);
      expect(created.status).toBe('pending');
      expect((await store().get(tenant, created.id))?.decidedBy).toBeUndefined();
    });

    it('rejects a second approval with the same id in the same tenant and keeps the first', async () => {
      const tenant = freshTenant();
      const first = await store().create(newApproval(tenant, { id: 'same' }));
      await expect(store().create(newApproval(tenant, { id: 'same', requester: 'mallory' }))).rejects.toThrow(/already exists/);
      expect(await store().get(tenant, 'same')).toEqual(first);
    });

    it('scopes ids to their tenant', async () => {
      const a = freshTenant('a');
      const b = freshTenant('b');
      const inA = await store().create(newApproval(a, { id: 'shared-id' }));
      expect(await store().get(b, 'shared-id')).toBeUndefined();
      const inB = await store().create(newApproval(b, { id: 'shared-id', requester: 'carol' }));
      expect((await store().get(a, 'shared-id'))?.requester).toBe(inA.requester);
      expect((await store().get(b, 'shared-id'))?.requester).toBe(inB.requester);
    });

    it('answers undefined for an unknown id', async () => {
      expect(await store().get(freshTenant(), 'no-such-approval')).toBeUndefined();
    });

    it('keeps epoch milliseconds beyond 32 bits exactly', async () => {
      const tenant = freshTenant();
      const createdAt = Date.UTC(2099, 11, 31, 23, 59, 59, 999);
      const created = await store().create(newApproval(tenant, { createdAt, expiresAt: createdAt + 1 }));
      const read = await store().get(tenant, created.id);
      expect(read?.createdAt).toBe(createdAt);
      expect(read?.expiresAt).toBe(createdAt + 1);
      expect(typeof read?.createdAt).toBe('number');
    });

    it('returns copies: editing a returned record changes nothing stored', async () => {
      const tenant = freshTenant();
      const created = await store().create(newApproval(tenant));
      (created.args as JsonObject)['command'] = 'rm -rf /';
      expect((await store().get(tenant, created.id))?.args['command']).toBe('ls');
    });
  });

  describe('strings are stored verbatim', () => {
    it('keeps SQL-like, quoted and unicode text in every field', async () => {
      const tenant = freshTenant("ten'ant; --");
      for (const [i, text] of HOSTILE_STRINGS.entries()) {
        const input = newApproval(tenant, {
          id: `${text}#${i}`,
          requester: text,
          tool: text,
          version: text,
          payloadDigest: text,
          args: { [text]: text, nested: [text, { text }] },
        });
        const created = await store().create(input);
        expect(created).toEqual({ ...input, status: 'pending' });
        expect(await store().get(tenant, input.id)).toEqual(created);
        const decided = await store().decide(tenant, input.id, { approve: false, by: text, reason: text, selfApproved: false, at: T0 + 1 });
        expect(decided.ok && decided.record.reason).toBe(text);
        expect((await store().get(tenant, input.id))?.decidedBy).toBe(text);
        expect(await store().list(tenant, { requester: text, limit: 10 })).toHaveLength(1);
      }
      // The injection attempts did nothing: every approval is still there.
      expect(await store().list(tenant, { limit: 100 })).toHaveLength(HOSTILE_STRINGS.length);
    });

    it('keeps large and awkward JSON arguments exactly', async () => {
      const tenant = freshTenant();
      const args: JsonObject = {
        big: 'x'.repeat(256 * 1024),
        nul: 'before\u0000after',
        lone: 'a\ud800b: JSON escapes a lone surrogate',
        numbers: [0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER],
        flags: [true, false, null],
        deep: { a: { b: { c: { d: ['e'] } } } },
        'key with "quotes" and \'apostrophes\'': "'); DROP TABLE approvals; --",
      };
      const created = await store().create(newApproval(tenant, { args }));
      expect((await store().get(tenant, created.id))?.args).toEqual(args);
    });

    it('rejects text a database cannot keep verbatim, with a message naming the field', async () => {
      const tenant = freshTenant();
      await expect(store().create(newApproval(tenant, { id: 'nul\u0000id' }))).rejects.toThrow(/id must be well-formed Unicode/);
      await expect(store().create(newApproval(tenant, { requester: 'lone \ud800 surrogate' }))).rejects.toThrow(
        /requester must be well-formed Unicode/,
      );
      const created = await store().create(newApproval(tenant));
      await expect(
        store().decide(tenant, created.id, { approve: true, by: 'bob', reason: 'bad\u0000reason', selfApproved: false, at: T0 + 1 }),
      ).rejects.toThrow(/reason must be well-formed Unicode/);
      expect((await store().get(tenant, created.id))?.status).toBe('pending');
      expect(await store().list(tenant, { limit: 10 })).toHaveLength(1);
    });

    it('treats an id no store could hold as unknown, never as a look-alike', async () => {
      const tenant = freshTenant();
      const stored = await approved(tenant, { id: 'id-\ufffd', requester: 'r-\ufffd' });
      const lookAlike = 'id-\ud800';
      expect(await store().get(tenant, lookAlike)).toBeUndefined();
      expect(await store().decide(tenant, lookAlike, approve())).toEqual({ ok: false, problem: 'not_found' });
      expect(await store().consume(tenant, lookAlike, stored.payloadDigest, T0 + 2)).toEqual({ ok: false, problem: 'not_found' });
      expect(await store().list(tenant, { requester: 'r-\ud800', limit: 10 })).toEqual([]);
      expect(await store().get(tenant, 'id-\u0000')).toBeUndefined();
      expect((await store().get(tenant, stored.id))?.status).toBe('approved');
    });

    it('rejects arguments that are not a JSON object', async () => {
      const tenant = freshTenant();
      await expect(store().create(newApproval(tenant, { args: ['a'] as unknown as JsonObject }))).rejects.toThrow(/args must be a JSON object/);
      await expect(store().create(newApproval(tenant, { args: null as unknown as JsonObject }))).rejects.toThrow(/args must be a JSON object/);
    });
  });

  describe('list', () => {
    it('lists newest first, breaking ties by creation order, and only the tenant’s own', async () => {
      const tenant = freshTenant();
      const other = freshTenant('other');
      await store().create(newApproval(other, { id: 'foreign', createdAt: T0 + 50 }));
      const ids: string[] = [];
      for (const createdAt of [T0 + 10, T0 + 30, T0 + 20, T0 + 30, T0]) {
        ids.push((await store().create(newApproval(tenant, { createdAt }))).id);
      }
      const listed = await store().list(tenant, { limit: 100 });
      expect(listed.map((r) => r.id)).toEqual([ids[3], ids[1], ids[2], ids[0], ids[4]]);
    });

    it('honours the limit, keeping the newest', async () => {
      const tenant = freshTenant();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store().create(newApproval(tenant, { createdAt: T0 + i }))).id);
      expect((await store().list(tenant, { limit: 2 })).map((r) => r.id)).toEqual([ids[4], ids[3]]);
      expect(await store().list(tenant, { limit: 0 })).toEqual([]);
      await expect(store().list(tenant, { limit: -1 })).rejects.toThrow(/limit/);
      await expect(store().list(tenant, { limit: 1.5 })).rejects.toThrow(/limit/);
    });

    it('filters by status, requester and payload digest, alone and together', async () => {
      const tenant = freshTenant();
      const digestA = `sha256:${'a'.repeat(64)}`;
      const digestB = `sha256:${'b'.repeat(64)}`;
      const p1 = await store().create(newApproval(tenant, { requester: 'alice', payloadDigest: digestA, createdAt: T0 + 1 }));
      const p2 = await store().create(newApproval(tenant, { requester: 'bob', payloadDigest: digestA, createdAt: T0 + 2 }));
      const a1 = await approved(tenant, { requester: 'alice', payloadDigest: digestB, createdAt: T0 + 3 });
      const d1 = await store().create(newApproval(tenant, { requester: 'alice', payloadDigest: digestA, createdAt: T0 + 4 }));
      await store().decide(tenant, d1.id, { approve: false, by: 'bob', selfApproved: false, at: T0 + 5 });
      const ids = async (filter: Parameters<ApprovalStore['list']>[1]) => (await store().list(tenant, filter)).map((r) => r.id);

      expect(await ids({ status: 'pending', limit: 10 })).toEqual([p2.id, p1.id]);
      expect(await ids({ status: 'approved', limit: 10 })).toEqual([a1.id]);
      expect(await ids({ status: 'denied', limit: 10 })).toEqual([d1.id]);
      expect(await ids({ status: 'consumed', limit: 10 })).toEqual([]);
      expect(await ids({ requester: 'alice', limit: 10 })).toEqual([d1.id, a1.id, p1.id]);
      expect(await ids({ payloadDigest: digestA, limit: 10 })).toEqual([d1.id, p2.id, p1.id]);
      expect(await ids({ requester: 'alice', payloadDigest: digestA, status: 'pending', limit: 10 })).toEqual([p1.id]);
      expect(await ids({ requester: 'alice', limit: 1 })).toEqual([d1.id]);
      expect(await ids({ requester: 'nobody', limit: 10 })).toEqual([]);
    });
  });

  describe('decide', () => {
    it('approves a pending approval and records who, when, why and whether it was self-approved', async () => {
      const tenant = freshTenant();
      const created = await store().create(newApproval(tenant));
      const outcome = await store().decide(tenant, created.id, { approve: true, by: 'alice', reason: 'looks fine', selfApproved: true, at: T0 + 7 });
      const expected = { ...created, status: 'approved', decidedBy: 'alice', decidedAt: T0 + 7, reason: 'looks fine', selfApproved: true };
      expect(outcome).toEqual({ ok: true, record: expected });
      expect(await store().get(tenant, created.id)).toEqual(expected);
    });

    it('denies a pending approval; without a reason none is recorded', async () => {
      const tenant = freshTenant();
      const created = await store().create(newApproval(tenant));
      const outcome = await store().decide(tenant, created.id, { approve: false, by: 'bob', selfApproved: false, at: T0 + 9 });
      expect(outcome.ok).toBe(true);
      const read = await store().get(tenant, created.id);
      expect(read).toMatchObject({ status: 'denied', decidedBy: 'bob', decidedAt: T0 + 9, selfApproved: false });
      expect(read?.reason).toBeUndefined();
      expect(read?.consumedAt).toBeUndefined();
    });

    it('answers not_found for an unknown id and for another tenant’s approval', async () => {
      const tenant = freshTenant();
      const created = await store().create(newApproval(tenant));
      expect(await store().decide(tenant, 'missing', approve())).toEqual({ ok: false, problem: 'not_found' });
      expect(await store().decide(freshTenant('other'), created.id, approve())).toEqual({ ok: false, problem: 'not_found' });
      expect((await store().get(tenant, created.id))?.status).toBe('pending');
    });

    it('refuses to decide twice, whatever the first decision, and leaves the record as it was', async () => {
      const tenant = freshTenant();
      const wasApproved = await approved(tenant);
      const second = await store().decide(tenant, wasApproved.id, { approve: false, by: 'mallory', selfApproved: false, at: T0 + 2 });
      expect(second).toEqual({ ok: false, problem: 'not_pending', record: wasApproved });

      const denied = await store().create(newApproval(tenant));
      await store().decide(tenant, denied.id, { approve: false, by: 'bob', selfApproved: false, at: T0 + 2 });
      const flip = await store().decide(tenant, denied.id, approve(T0 + 3, 'mallory'));
      expect(flip.ok === false && flip.problem).toBe('not_pending');
      expect(await store().get(tenant, denied.id)).toMatchObject({ status: 'denied', decidedBy: 'bob' });

      const used = await approved(tenant);
      await store().consume(tenant, used.id, used.payloadDigest, T0 + 5);
      const afterUse = await store().decide(tenant, used.id, approve(T0 + 6));
      expect(afterUse.ok === false && afterUse.problem).toBe('not_pending');
    });

    it('decides until the millisecond before expiry and refuses from expiresAt on', async () => {
      const tenant = freshTenant();
      const late = await store().create(newApproval(tenant));
      expect(await store().decide(tenant, late.id, approve(late.expiresAt))).toEqual({ ok: false, problem: 'expired', record: late });
      expect(await store().decide(tenant, late.id, approve(late.expiresAt + HOUR))).toMatchObject({ ok: false, problem: 'expired' });
      expect((await store().get(tenant, late.id))?.status).toBe('pending');
      const justInTime = await store().create(newApproval(tenant));
      expect(await store().decide(tenant, justInTime.id, approve(justInTime.expiresAt - 1))).toMatchObject({ ok: true });
    });

    it('lets exactly one of 50 concurrent decisions win', async () => {
      const tenant = freshTenant();
      const created = await store().create(newApproval(tenant));
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store().decide(tenant, created.id, { approve: i % 2 === 0, by: `approver-${i}`, selfApproved: false, at: T0 + 1 })),
      );
      const winners = outcomes.filter((o) => o.ok);
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok && o.problem === 'not_pending')).toHaveLength(49);
      const stored = await store().get(tenant, created.id);
      expect(winners[0]?.ok && winners[0].record).toEqual(stored);
    });
  });

  describe('consume', () => {
    it('uses an approved approval once and records when', async () => {
      const tenant = freshTenant();
      const record = await approved(tenant);
      const outcome = await store().consume(tenant, record.id, record.payloadDigest, T0 + 100);
      expect(outcome).toEqual({ ok: true, record: { ...record, status: 'consumed', consumedAt: T0 + 100 } });
      expect(await store().get(tenant, record.id)).toEqual({ ...record, status: 'consumed', consumedAt: T0 + 100 });
      const again = await store().consume(tenant, record.id, record.payloadDigest, T0 + 101);
      expect(again).toMatchObject({ ok: false, problem: 'consumed', record: { consumedAt: T0 + 100 } });
    });

    it('answers not_found for an unknown id and for another tenant’s approval', async () => {
      const tenant = freshTenant();
      const record = await approved(tenant);
      expect(await store().consume(tenant, 'missing', record.payloadDigest, T0 + 2)).toEqual({ ok: false, problem: 'not_found' });
      expect(await store().consume(freshTenant('other'), record.id, record.payloadDigest, T0 + 2)).toEqual({ ok: false, problem: 'not_found' });
      expect((await store().get(tenant, record.id))?.status).toBe('approved');
    });

    it('refuses a pending or denied approval as not_approved', async () => {
      const tenant = freshTenant();
      const pending = await store().create(newApproval(tenant));
      expect(await store().consume(tenant, pending.id, pending.payloadDigest, T0 + 2)).toEqual({ ok: false, problem: 'not_approved', record: pending });
      const denied = await store().create(newApproval(tenant));
      await store().decide(tenant, denied.id, { approve: false, by: 'bob', selfApproved: false, at: T0 + 1 });
      expect(await store().consume(tenant, denied.id, denied.payloadDigest, T0 + 2)).toMatchObject({ ok: false, problem: 'not_approved' });
      expect((await store().get(tenant, denied.id))?.status).toBe('denied');
    });

    it('refuses a different payload without using the approval up', async () => {
      const tenant = freshTenant();
      const record = await approved(tenant);
      const mismatch = await store().consume(tenant, record.id, `sha256:${'cd'.repeat(32)}`, T0 + 2);
      expect(mismatch).toEqual({ ok: false, problem: 'payload_mismatch', record });
      expect((await store().get(tenant, record.id))?.status).toBe('approved');
      expect(await store().consume(tenant, record.id, record.payloadDigest, T0 + 3)).toMatchObject({ ok: true });
    });

    it('consumes until the millisecond before expiry and refuses from expiresAt on', async () => {
      const tenant = freshTenant();
      const record = await approved(tenant);
      expect(await store().consume(tenant, record.id, record.payloadDigest, record.expiresAt)).toEqual({ ok: false, problem: 'expired', record });
      expect((await store().get(tenant, record.id))?.status).toBe('approved');
      const other = await approved(tenant);
      expect(await store().consume(tenant, other.id, other.payloadDigest, other.expiresAt - 1)).toMatchObject({ ok: true });
    });

    it('reports expiry before a payload mismatch, and consumed before everything else', async () => {
      const tenant = freshTenant();
      const record = await approved(tenant);
      const wrong = `sha256:${'ef'.repeat(32)}`;
      expect(await store().consume(tenant, record.id, wrong, record.expiresAt)).toMatchObject({ ok: false, problem: 'expired' });
      await store().consume(tenant, record.id, record.payloadDigest, T0 + 2);
      expect(await store().consume(tenant, record.id, wrong, record.expiresAt + 1)).toMatchObject({ ok: false, problem: 'consumed' });
    });

    it('lets exactly one of 50 concurrent consumers use an approval', async () => {
      const tenant = freshTenant();
      const record = await approved(tenant);
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store().consume(tenant, record.id, record.payloadDigest, T0 + 10 + i)),
      );
      const winners = outcomes.filter((o) => o.ok);
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok && o.problem === 'consumed')).toHaveLength(49);
      const stored = await store().get(tenant, record.id);
      expect(stored?.status).toBe('consumed');
      expect(winners[0]?.ok && winners[0].record.consumedAt).toBe(stored?.consumedAt);
    });
  });

  describe('release', () => {
    /** An approval consumed at `at`, as the gateway's commit step leaves it. */
    const consumed = async (tenant: string, at = T0 + 100, overrides: Partial<NewApproval> = {}): Promise<ApprovalRecord> => {
      const record = await approved(tenant, overrides);
      const outcome = await store().consume(tenant, record.id, record.payloadDigest, at);
      if (!outcome.ok) throw new Error(`setup could not consume: ${outcome.problem}`);
      return outcome.record;
    };
    const statusOf = async (tenant: string, id: string) => (await store().get(tenant, id))?.status;

    it('gives a consumed approval back as approved, without consumedAt, and it can be used once more', async () => {
      const tenant = freshTenant();
      const used = await consumed(tenant);
      expect(await store().release(tenant, used.id, used.payloadDigest, T0 + 100)).toBe(true);
      const { consumedAt: _dropped, ...asApproved } = used;
      expect(await store().get(tenant, used.id)).toEqual({ ...asApproved, status: 'approved' });
      expect(await store().consume(tenant, used.id, used.payloadDigest, T0 + 200)).toMatchObject({ ok: true, record: { consumedAt: T0 + 200 } });
      expect(await store().consume(tenant, used.id, used.payloadDigest, T0 + 201)).toMatchObject({ ok: false, problem: 'consumed' });
    });

    describe('a release that is not the consuming call’s (stale or forged use time)', () => {
      it('refuses any consumedAt but the one the consume wrote, and leaves the approval used', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100);
        for (const wrong of [T0 + 99, T0 + 101, 0, -1, T0 + 100 + HOUR, Number.MAX_SAFE_INTEGER]) {
          expect(await store().release(tenant, used.id, used.payloadDigest, wrong)).toBe(false);
        }
        expect(await store().get(tenant, used.id)).toEqual(used);
      });

      it('refuses a use time that is not an integer instead of matching it loosely', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100);
        for (const wrong of [T0 + 100.5, Number.NaN, Number.POSITIVE_INFINITY, `${T0 + 100}` as unknown as number, null as unknown as number]) {
          await expect(store().release(tenant, used.id, used.payloadDigest, wrong)).rejects.toThrow(/consumedAt must be an integer/);
        }
        expect(await store().get(tenant, used.id)).toEqual(used);
      });

      it('cannot give back the use of a later call with the time of an earlier one', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100);
        expect(await store().release(tenant, used.id, used.payloadDigest, T0 + 100)).toBe(true);
        const second = await store().consume(tenant, used.id, used.payloadDigest, T0 + 300);
        expect(second.ok).toBe(true);
        // The first call's release arrives again (a retry): the second call's use stands.
        expect(await store().release(tenant, used.id, used.payloadDigest, T0 + 100)).toBe(false);
        expect(await store().get(tenant, used.id)).toMatchObject({ status: 'consumed', consumedAt: T0 + 300 });
      });
    });

    describe('a release of another payload (digest mismatch)', () => {
      it('refuses every other digest, including look-alikes, and leaves the approval used', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant);
        const digest = used.payloadDigest;
        for (const wrong of [`sha256:${'cd'.repeat(32)}`, digest.toUpperCase(), digest.slice(7), `${digest} `, ` ${digest}`, `${digest}\u0000`, '', '%', 'lone \ud800']) {
          expect(await store().release(tenant, used.id, wrong, T0 + 100)).toBe(false);
        }
        expect(await store().get(tenant, used.id)).toEqual(used);
      });
    });

    describe('a release across tenants or of an unknown id', () => {
      it('finds nothing in another tenant, even one with an approval of the same id', async () => {
        const tenant = freshTenant('a');
        const other = freshTenant('b');
        const used = await consumed(tenant, T0 + 100, { id: 'shared-release-id' });
        const theirs = await consumed(other, T0 + 100, { id: 'shared-release-id' });
        for (const wrongTenant of [freshTenant('c'), tenant.toUpperCase(), `${tenant} `, '', "'; --"]) {
          expect(await store().release(wrongTenant, used.id, used.payloadDigest, T0 + 100)).toBe(false);
        }
        expect(await store().release(other, theirs.id, theirs.payloadDigest, T0 + 100)).toBe(true);
        expect(await store().get(tenant, used.id)).toEqual(used);
      });

      it('answers false for an unknown id, a look-alike and a pattern, changing nothing', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100, { id: 'id-\ufffd' });
        for (const wrongId of ['missing', 'id-\ud800', 'id-\u0000', 'id-%', 'id-_', '%', `${used.id} `, "' OR '1'='1"]) {
          expect(await store().release(tenant, wrongId, used.payloadDigest, T0 + 100)).toBe(false);
        }
        expect(await store().get(tenant, used.id)).toEqual(used);
      });
    });

    describe('a release of an approval that was not consumed', () => {
      it('refuses pending, approved and denied approvals and leaves each as it was', async () => {
        const tenant = freshTenant();
        const pending = await store().create(newApproval(tenant));
        const stillApproved = await approved(tenant);
        const denied = await store().create(newApproval(tenant));
        await store().decide(tenant, denied.id, { approve: false, by: 'bob', selfApproved: false, at: T0 + 1 });
        const deniedRecord = await store().get(tenant, denied.id);
        for (const record of [pending, stillApproved, deniedRecord as ApprovalRecord]) {
          for (const at of [T0 + 100, record.createdAt, record.decidedAt ?? T0]) {
            expect(await store().release(tenant, record.id, record.payloadDigest, at)).toBe(false);
          }
        }
        expect(await store().get(tenant, pending.id)).toEqual(pending);
        expect(await store().get(tenant, stillApproved.id)).toEqual(stillApproved);
        expect(await store().get(tenant, denied.id)).toEqual(deniedRecord);
      });
    });

    describe('a release twice', () => {
      it('gives an approval back once: a second release, or 20 concurrent ones, win once', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100);
        expect(await store().release(tenant, used.id, used.payloadDigest, T0 + 100)).toBe(true);
        expect(await store().release(tenant, used.id, used.payloadDigest, T0 + 100)).toBe(false);
        expect(await statusOf(tenant, used.id)).toBe('approved');

        const again = await consumed(tenant, T0 + 100);
        const results = await Promise.all(Array.from({ length: 20 }, () => store().release(tenant, again.id, again.payloadDigest, T0 + 100)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await statusOf(tenant, again.id)).toBe('approved');
      });
    });

    describe('a release racing consumers', () => {
      it('lets exactly one release win and at most one consumer use the approval after it', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100);
        const racers = Array.from({ length: 40 }, (_, i) =>
          i % 2 === 0
            ? store().release(tenant, used.id, used.payloadDigest, T0 + 100).then((released) => ({ released }))
            : store().consume(tenant, used.id, used.payloadDigest, T0 + 200 + i).then((outcome) => ({ outcome })),
        );
        const results = await Promise.all(racers);
        const releases = results.flatMap((r) => ('released' in r ? [r.released] : []));
        const wins = results.flatMap((r) => ('outcome' in r && r.outcome.ok ? [r.outcome.record] : []));
        expect(releases.filter(Boolean)).toHaveLength(1);
        expect(wins.length).toBeLessThanOrEqual(1);
        const stored = await store().get(tenant, used.id);
        if (wins[0]) expect(stored).toMatchObject({ status: 'consumed', consumedAt: wins[0].consumedAt });
        else expect(stored?.status).toBe('approved');
        // Whoever won, the approval allows no more calls than one given back.
        const after = await store().consume(tenant, used.id, used.payloadDigest, T0 + 500);
        expect(after.ok).toBe(wins.length === 0);
      });
    });

    describe('a release past expiry', () => {
      it('gives the approval back but it stays expired: no consume and no decision from expiresAt on', async () => {
        const tenant = freshTenant();
        const used = await consumed(tenant, T0 + 100);
        expect(await store().release(tenant, used.id, used.payloadDigest, T0 + 100)).toBe(true);
        expect(await store().consume(tenant, used.id, used.payloadDigest, used.expiresAt)).toMatchObject({ ok: false, problem: 'expired' });
        expect(await store().consume(tenant, used.id, used.payloadDigest, used.expiresAt + HOUR)).toMatchObject({ ok: false, problem: 'expired' });
        expect(await store().decide(tenant, used.id, approve(used.expiresAt + 1))).toMatchObject({ ok: false });
        expect(await store().get(tenant, used.id)).toMatchObject({ status: 'approved', expiresAt: used.expiresAt });
      });
    });
  });
}
