import { describe, expect, it } from 'vitest';
import { LiteralDirectory } from './literal-directory.js';
import { ManualClock } from './manual-clock.js';
import { PassThroughRunner } from './pass-through-runner.js';
import { RecordingAuditSink } from './recording-audit-sink.js';
import { testToolContext } from './tool-context.js';

// The fakes stand in for ports in other projects' tests, so each must answer as the port says.
describe('LiteralDirectory', () => {
  const directory = new LiteralDirectory({
    tenants: { acme: { tools: ['*'], selfApproval: false, grants: [] } },
    roles: { worker: ['calculator'], operator: { tools: ['*'], grants: [{ type: 'exec', scope: '*' }] } },
    principals: [
      { id: 'w', tenant: 'acme', roles: ['worker'] },
      { id: 'w', tenant: 'globex', roles: ['worker'] },
    ],
  });

  it('answers only what it was told, per tenant', async () => {
    expect(directory.get('acme', 'w')?.tenant).toBe('acme');
    expect(directory.get('acme', 'nobody')).toBeUndefined();
    expect(directory.principals('globex').map((p) => p.tenant)).toEqual(['globex']);
    expect(directory.tenants()).toEqual(['acme']);
    expect(directory.tenant('globex')).toBeUndefined();
    await expect(directory.authenticate()).resolves.toMatchObject({ outcome: 'refused' });
  });

  it('gives a plain role no grants and an unknown role nothing, prototype names included', () => {
    expect(directory.roleTools('worker')).toEqual(['calculator']);
    expect(directory.roleGrants('worker')).toEqual([]);
    expect(directory.roleGrants('operator')).toEqual([{ type: 'exec', scope: '*' }]);
    for (const role of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'ghost']) {
      expect(directory.roleTools(role), role).toBeUndefined();
      expect(directory.roleGrants(role), role).toBeUndefined();
      expect(directory.tenant(role), role).toBeUndefined();
    }
  });
});

describe('RecordingAuditSink', () => {
  it('keeps records in order and tails them as the port says (newest matching, oldest first)', async () => {
    const sink = new RecordingAuditSink();
    for (const tenant of ['a', 'b', 'a', 'a']) await sink.append({ event: 'authorized', ts: '2030-01-01T00:00:00.000Z', tenant });
    expect((await sink.tail({ tenant: 'a', limit: 2 })).map((r) => r.seq)).toEqual([3, 4]);
    expect((await sink.tail({ afterSeq: 3, limit: 10 })).map((r) => r.seq)).toEqual([4]);
    expect(await sink.tail({ limit: 0 })).toEqual([]);
    expect(sink.kinds()).toEqual(['authorized', 'authorized', 'authorized', 'authorized']);
  });

  it('refuses an append when told, keeping nothing', async () => {
    const sink = new RecordingAuditSink();
    sink.failWhen = (event) => event.event === 'denied';
    await expect(sink.append({ event: 'denied', ts: '2030-01-01T00:00:00.000Z' })).rejects.toThrow(/disk full/);
    expect(sink.records).toEqual([]);
  });
});

describe('ManualClock', () => {
  it('moves only when told', () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });
});

describe('testToolContext', () => {
  it('gives each context its own signal and keeps what the test passes', () => {
    const one = testToolContext();
    const controller = new AbortController();
    const two = testToolContext({ signal: controller.signal, workspaceRoot: '/tmp/ws' });
    expect(one.signal).not.toBe(testToolContext().signal);
    expect(two.workspaceRoot).toBe('/tmp/ws');
    controller.abort();
    expect(two.signal.aborted).toBe(true);
    expect(one.signal.aborted).toBe(false);
  });
});

describe('PassThroughRunner', () => {
  it('prepares the command unchanged with a minimal environment, and never runs one', async () => {
    const runner = new PassThroughRunner();
    const prepared = runner.prepare({ command: 'node', args: ['server.js'], env: { TOKEN: 'x' } }, '/ws');
    expect(prepared).toMatchObject({ command: 'node', args: ['server.js'], cwd: '/ws', env: { HOME: '/ws', LANG: 'C.UTF-8', TOKEN: 'x' } });
    expect(runner.prepared).toHaveLength(1);
    await expect(runner.run()).rejects.toThrow(/only prepares/);
  });
});
