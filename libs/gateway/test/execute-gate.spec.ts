import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  ToolAbortedError,
  ToolError,
  type GatewayListener,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
  type JsonObject,
  type JsonValue,
  type ToolContext,
  type ToolExecutor,
  type ToolFailure,
  type ToolHandler,
} from '@toolgate/contracts';
import { timeLessCpuWait } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, ROLES, testTool } from './harness.js';

function slowTool(timeoutMs: number, run: (args: JsonObject, ctx: ToolContext) => Promise<JsonValue>) {
  return testTool({ name: 'slow', timeoutMs }, run);
}

describe('gate 10: execute', () => {
  it('answers TIMEOUT at the deadline even when the handler ignores its signal', async () => {
    let signal: AbortSignal | undefined;
    const tool = slowTool(50, (_args, ctx) => {
      signal = ctx.signal;
      return new Promise((resolve) => setTimeout(() => resolve('late'), 1500));
    });
    const h = harness({ tools: [tool] });
    const { value: result, ms: elapsed } = await timeLessCpuWait(() => h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }));
    const denial = denialOf(result);
    expect(denial).toMatchObject({ gate: 'execute', code: 'TIMEOUT', message: 'The tool did not finish within its 50 ms deadline.' });
    expect(elapsed).toBeLessThan(1000);
    expect(signal?.aborted).toBe(true);
    expect(h.audit.kinds()).toEqual(['authorized', 'failed:TIMEOUT']);
  });

  it('answers TIMEOUT at the deadline for a handler that never settles and ignores its signal', async () => {
    const h = harness({ tools: [slowTool(20, () => new Promise(() => undefined))] });
    const { value: result, ms } = await timeLessCpuWait(() => h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }));
    const denial = denialOf(result);
    expect(denial).toMatchObject({ code: 'TIMEOUT', data: { timeoutMs: 20 } });
    expect(ms).toBeLessThan(1000);
    expect(h.audit.kinds()).toEqual(['authorized', 'failed:TIMEOUT']);
  });

  it('answers TIMEOUT exactly when the executor reports the deadline, with no clock of its own', async () => {
    // The manifest allows 5 s; the executor, which owns the deadline, reports it at once.
    const early: ToolExecutor = {
      tier: 'inprocess',
      isolation: { summary: 'test executor' },
      check: async () => undefined,
      execute: async () => ({ status: 'deadline', timeoutMs: 5000 }),
    };
    const h = harness({ tools: [slowTool(5000, async () => null)], executors: [early] });
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }))).toMatchObject({
      code: 'TIMEOUT',
      message: 'The tool did not finish within its 5000 ms deadline.',
    });
  });

  it("stops the scoped HTTP client's requests once the executor reports the deadline", async () => {
    const requests: HttpRequest[] = [];
    const http: HttpClient = {
      request: (request) => {
        requests.push(request);
        return new Promise<HttpResponse>(() => undefined);
      },
    };
    const net = [{ type: 'network' as const, scope: '*' }];
    const tool = testTool({ name: 'hangs', timeoutMs: 50, permissions: net, egress: { hosts: ['api.weather.test'] } }, (_args, ctx) => {
      // Left running without the handler's signal: only the call's own signal can stop it.
      void ctx.http?.request({ url: 'https://api.weather.test/now' });
      return new Promise(() => undefined);
    });
    const h = harness({
      tools: [tool],
      roles: { ...ROLES, worker: { tools: ['*'], grants: net } },
      bootEgress: { enabled: true, allowAny: false, hosts: ['api.weather.test'] },
      deps: { http },
    });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'hangs', args: {}, grants: net }));
    expect(denial.code).toBe('TIMEOUT');
    expect(requests).toHaveLength(1);
    expect(requests[0]?.signal?.aborted).toBe(true);
  });

  describe('forged timeouts: only the executor can report a deadline', () => {
    it.each([
      ['a ToolAbortedError naming a timeout', () => new ToolAbortedError('timed out after 1 ms')],
      ['a plain ToolAbortedError', () => new ToolAbortedError()],
      ['a ToolError with reason ABORTED', () => new ToolError('timed out after 1 ms', 'ABORTED')],
      ['a ToolError with reason TIMEOUT', () => new ToolError('timed out after 5000 ms', 'TIMEOUT')],
    ])('a fast handler that throws %s fails, it does not time out', async (_name, error) => {
      const h = harness({ tools: [slowTool(5000, async () => Promise.reject(error()))] });
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }));
      expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', message: error().message });
      expect(h.audit.kinds()).toEqual(['authorized', 'failed:EXECUTION_FAILED']);
    });

    it('an executor that rejects (breaking its contract) fails the call, whatever its error says', async () => {
      const liar: ToolExecutor = {
        tier: 'inprocess',
        isolation: { summary: 'test executor' },
        check: async () => undefined,
        execute: async () => {
          throw new ToolError('timed out after 1 ms', 'ABORTED');
        },
      };
      const h = harness({ tools: [slowTool(5000, async () => null)], executors: [liar] });
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }));
      expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', message: 'timed out after 1 ms' });
    });
  });

  it('never passes on a foreign error message (it may hold paths or secrets)', async () => {
    const tool = testTool({ name: 'leaky' }, async () => {
      throw new Error("ENOENT: open '/root/secret/path/key.pem' (token sk-123)");
    });
    const h = harness({ tools: [tool] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'leaky', args: {} });
    const denial = denialOf(result);
    expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED', message: 'the tool failed', data: { reason: 'UNEXPECTED' } });
    expect(JSON.stringify(result)).not.toContain('/root/secret/path');
    expect(JSON.stringify(h.audit.events)).not.toContain('/root/secret/path');
    expect(JSON.stringify(h.audit.events)).not.toContain('sk-123');
  });

  it('passes on a ToolError message, with host paths and the workspace root stripped but the caller own paths kept', async () => {
    const tool = testTool(
      { name: 'files', input: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false } },
      async (args, ctx) => {
        throw new ToolError(`cannot read '${String(args['path'])}': ${ctx.workspaceRoot}/notes.txt is locked by /usr/lib/toolgate/lock.js`, 'LOCKED');
      },
    );
    const h = harness({ tools: [tool] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'files', args: { path: '/etc/hosts' } }));
    expect(denial).toMatchObject({
      code: 'EXECUTION_FAILED',
      message: "cannot read '/etc/hosts': <workspace>/notes.txt is locked by [path]",
      data: { reason: 'LOCKED' },
    });
    expect(h.audit.events.at(-1)).toMatchObject({ event: 'failed', code: 'EXECUTION_FAILED', detail: denial.message });
  });

  it('refuses a tool whose tier has no executor before authorizing or charging anything', async () => {
    const tool = testTool({ name: 'sandboxed', tier: 'bwrap' });
    const h = harness({ tools: [tool] });
    const denial = denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'sandboxed', args: {} }));
    expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED' });
    expect(denial.message).toContain("tier 'bwrap' is not available");
    expect(h.audit.kinds()).toEqual(['denied:EXECUTION_FAILED']);
    expect(await h.budgets.remaining('acme', 'thrifty', { calls: 2, windowSeconds: 60 }, h.clock.now())).toBe(2);
  });

  it('hands the handler its tenant workspace, created on first use, and the call id and principal', async () => {
    const tool = testTool({ name: 'where' }, async (_args, ctx) => ({ root: ctx.workspaceRoot, exists: existsSync(ctx.workspaceRoot), callId: ctx.callId, who: ctx.principal.id }));
    const h = harness({ tools: [tool] });
    const result = await h.gateway.invoke(h.who('worker-g'), { tool: 'where', args: {} });
    expect(result).toMatchObject({ ok: true, output: { root: join(h.workspaceRoot, 'globex'), exists: true, callId: result.callId, who: 'worker-g' } });
  });

  it('refuses a tenant name that cannot be a directory, without running the tool', async () => {
    const tool = testTool({ name: 'where' });
    const h = harness({ tools: [tool], tenants: { '../escape': { tools: ['*'], selfApproval: false, grants: [] } } });
    const denial = denialOf(await h.gateway.invoke({ id: 'x', tenant: '../escape', roles: ['worker'] }, { tool: 'where', args: {} }));
    expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED' });
    expect(tool.calls).toHaveLength(0);
    expect(existsSync(join(h.workspaceRoot, '..', 'escape'))).toBe(false);
  });

  it('aborts the handler when the caller goes away', async () => {
    const caller = new AbortController();
    let seen: AbortSignal | undefined;
    const tool = slowTool(5000, (_args, ctx) => {
      seen = ctx.signal;
      setTimeout(() => caller.abort(), 10);
      return new Promise(() => undefined);
    });
    const h = harness({ tools: [tool] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }, { signal: caller.signal }));
    expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', message: 'The call was cancelled by the caller before the tool finished.' });
    expect(seen?.aborted).toBe(true);
  });

  it('tells listeners about audited failures, and a throwing listener changes nothing', async () => {
    const seen: unknown[] = [];
    const listeners: GatewayListener[] = [
      {
        onToolFailure: async () => {
          throw new Error('listener bug');
        },
      },
      { onToolFailure: async (failure) => void seen.push(failure) },
    ];
    const tool = testTool({ name: 'fails', input: { type: 'object', properties: { n: { type: 'number' } }, additionalProperties: false } }, async () => {
      throw new ToolError('no luck');
    });
    const h = harness({ tools: [tool], deps: { listeners } });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fails', args: { n: 1 } }));
    expect(denial.message).toBe('no luck');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual([{ principal: h.who('worker-1'), tool: 'fails', args: { n: 1 }, message: 'no luck', at: h.clock.now() }]);
  });

  describe('secret disclosure to listeners', () => {
    it.each([
      ['a bearer header', 'upstream said 401 for Authorization: Bearer sk-live0123456789abcdef', 'sk-live0123456789abcdef'],
      ['basic auth in a URL', 'cannot reach https://app:hunter2@db.internal/x', 'hunter2'],
      ['an api_key pair', 'bad request ?api_key=k3y0123456789&x=1', 'k3y0123456789'],
      ['a GitHub token', 'clone of ghp_abcdefghijklmnopqrstuvwxyz0123456789 refused', 'ghp_abcdefghijklmnopqrstuvwxyz'],
      ['an AWS key pair', 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENG', 'wJalrXUtnFEMIK7MDENG'],
      ['a JSON password', 'config {"password":"correct horse"} rejected', 'correct horse'],
    ])('redacts %s before any listener hears of it', async (_name, message, secret) => {
      const seen: ToolFailure[] = [];
      const tool = testTool({ name: 'fails' }, async () => {
        throw new ToolError(message);
      });
      const h = harness({ tools: [tool], deps: { listeners: [{ onToolFailure: async (f) => void seen.push(f) }] } });
      await h.gateway.invoke(h.who('worker-1'), { tool: 'fails', args: {} });
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(seen).toHaveLength(1);
      expect(seen[0]!.message).toContain('[REDACTED]');
      expect(seen[0]!.message).not.toContain(secret);
    });
  });

  it('does not tell listeners about a failure whose outcome could not be audited', async () => {
    const seen: unknown[] = [];
    const tool = testTool({ name: 'fails' }, async () => {
      throw new ToolError('no luck');
    });
    const h = harness({ tools: [tool], deps: { listeners: [{ onToolFailure: async (f) => void seen.push(f) }] } });
    h.audit.failWhen = (e) => e.event === 'failed';
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fails', args: {} })).code).toBe('OUTCOME_UNAUDITED');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual([]);
  });

  it('gives process tiers their runner in the context', async () => {
    const processes = { run: async () => ({}) as never, prepare: () => ({}) as never };
    let got: unknown;
    const executor: ToolExecutor = {
      tier: 'unisolated',
      isolation: { summary: 'test executor' },
      processes,
      check: async () => undefined,
      execute: async (handler: ToolHandler, args, ctx) => ({ status: 'returned', output: await handler.invoke(args, ctx) }),
    };
    const tool = testTool({ name: 'proc', tier: 'unisolated' }, async (_args, ctx) => {
      got = ctx.process;
      return null;
    });
    const h = harness({ tools: [tool], executors: [executor] });
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'proc', args: {} })).ok).toBe(true);
    expect(got).toBe(processes);
  });
});
