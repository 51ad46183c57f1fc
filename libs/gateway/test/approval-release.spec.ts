import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ToolAbortedError,
  ToolError,
  ToolNotReachedError,
  type ApprovalStore,
  type BudgetPolicy,
  type BudgetStore,
  type ExecutionOutcome,
  type JsonObject,
  type JsonValue,
  type ToolContext,
  type ToolExecutor,
  type ToolHandler,
} from '@toolgate/contracts';
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { SubprocessExecutor } from '@toolgate/adapter-executor-subprocess';
import { MemoryApprovalStore, MemoryBudgetStore } from '@toolgate/adapter-store-memory';
import { openSqliteStores } from '@toolgate/adapter-store-sqlite';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import { afterAll, describe, expect, it } from 'vitest';
import { denialOf, harness, testTool, type HarnessOptions } from './harness.js';

// ADR 0062: an approval is used only by a call handed to its tool. These specs run the real
// gateway over real stores and tools, and read the approval back from the store after each call.

const BUDGET: BudgetPolicy = { calls: 100, windowSeconds: 3600 };
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

interface Stores {
  approvals: ApprovalStore;
  budgets: BudgetStore;
}
const STORES: readonly [string, () => Stores][] = [
  ['memory', () => ({ approvals: new MemoryApprovalStore(), budgets: new MemoryBudgetStore() })],
  [
    'sqlite',
    () => {
      const stores = openSqliteStores(join(tempDir('toolgate-release-'), 'state.db'));
      return { approvals: stores.approvals, budgets: stores.budgets };
    },
  ],
];

/**
 * A tool in front of a server that restarts, as an MCP source is: while it is restarting the
 * handler throws `ToolNotReachedError` before anything is sent; once it is up, the work runs
 * (for the process tier, as a real child process) and is counted.
 */
class RestartingServer {
  up = false;
  /** How long a call waits before it learns the server is down (a slow refusal). */
  refusalDelayMs = 0;
  ran = 0;
  refused = 0;

  tool(tier: 'inprocess' | 'unisolated' = 'inprocess', name = 'deploy') {
    return testTool(
      {
        name,
        risk: 'high',
        tier,
        timeoutMs: 5000,
        input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false },
      },
      (args, ctx) => this.call(args, ctx),
    );
  }

  async call(args: JsonObject, ctx: ToolContext): Promise<JsonValue> {
    if (this.refusalDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.refusalDelayMs));
    if (!this.up) {
      this.refused++;
      throw new ToolNotReachedError("MCP server 'deployer' is restarting (attempt 2); try again shortly", 'MCP_SERVER_RESTARTING');
    }
    this.ran++;
    if (ctx.process) {
      const result = await ctx.process.run(
        { command: 'sh', args: ['-c', 'printf deployed'] },
        { workspaceRoot: ctx.workspaceRoot, timeoutMs: 4000, maxOutputBytes: 1024, signal: ctx.signal },
      );
      return { target: args['target'] ?? null, said: result.stdout };
    }
    return { target: args['target'] ?? null };
  }
}

function setup(stores: Stores, options: HarnessOptions & { tools: HarnessOptions['tools'] }) {
  const h = harness({
    principals: [{ id: 'agent', tenant: 'acme', roles: ['worker'], budget: BUDGET }],
    ...options,
    deps: { approvals: stores.approvals, budgets: stores.budgets, ...options.deps },
  });
  const remaining = () => stores.budgets.remaining('acme', 'agent', BUDGET, h.clock.now());
  const approve = async (tool = 'deploy', args: JsonObject = { target: 'prod' }) => {
    const requested = await h.gateway.requestApproval(h.who('agent'), { tool, args });
    if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
    return h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
  };
  const statusOf = async (id: string) => (await stores.approvals.get('acme', id))?.status;
  const call = (approvalId: string, tool = 'deploy', args: JsonObject = { target: 'prod' }, signal?: AbortSignal) =>
    h.gateway.invoke(h.who('agent'), { tool, args, approvalId }, signal ? { signal } : {});
  return { h, remaining, approve, statusOf, call };
}

const RELEASED = (id: string) => `Approval '${id}' was not used and still allows one call.`;

describe.each(STORES)('calls that never reach the tool give their approval back (%s stores)', (_kind, open) => {
  describe('a source that is restarting (ToolNotReachedError)', () => {
    it.each([
      ['tier 0 (in-process)', 'inprocess', () => new InProcessExecutor()],
      ['tier 1 (a real process runner)', 'unisolated', () => new SubprocessExecutor()],
    ] as const)('at %s: refused, the approval still allows one call, and the call after the restart runs with it', async (_tier, tier, executor) => {
      const stores = open();
      const server = new RestartingServer();
      const { h, approve, statusOf, call } = setup(stores, { tools: [server.tool(tier)], executors: [executor()] });
      const approval = await approve();

      const denial = denialOf(await call(approval.id));
      expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED', data: { reason: 'MCP_SERVER_RESTARTING', reached: false, approvalId: approval.id, approvalReleased: true } });
      expect(denial.message).toContain("MCP server 'deployer' is restarting");
      expect(denial.message).toContain('The call did not reach the tool.');
      expect(denial.message).toContain(RELEASED(approval.id));
      expect(await statusOf(approval.id)).toBe('approved');
      expect(server.refused).toBe(1);

      // The outcome record says the call did not reach the tool and what became of the approval.
      const outcome = h.audit.records.at(-1);
      expect(outcome).toMatchObject({ event: 'failed', code: 'EXECUTION_FAILED', approvalReason: `approval:${approval.id}` });
      expect(outcome?.detail).toContain('The call did not reach the tool.');
      expect(outcome?.detail).toContain(RELEASED(approval.id));

      server.up = true;
      const ran = await call(approval.id);
      expect(ran).toMatchObject({ ok: true, output: { target: 'prod' } });
      if (tier === 'unisolated') expect(ran).toMatchObject({ output: { said: 'deployed' } });
      expect(server.ran).toBe(1);
      expect(await statusOf(approval.id)).toBe('consumed');
      // The approval allowed one call that ran, and no more.
      expect(denialOf(await call(approval.id))).toMatchObject({ code: 'APPROVAL_REQUIRED' });
      expect(server.ran).toBe(1);
    });

    it.each([
      ['thrown synchronously', (): ToolHandler['invoke'] => () => {
        throw new ToolNotReachedError('the client refused the request before sending it');
      }],
      ['as a rejection', (): ToolHandler['invoke'] => async () => Promise.reject(new ToolNotReachedError('server stopped', 'MCP_SERVER_STOPPED'))],
      ['after a slow wait', (): ToolHandler['invoke'] => async () => {
        await new Promise((resolve) => setTimeout(resolve, 60));
        throw new ToolNotReachedError('still restarting', 'MCP_SERVER_RESTARTING');
      }],
      ['as a subclass', (): ToolHandler['invoke'] => async () => {
        class LocalRefusal extends ToolNotReachedError {}
        throw new LocalRefusal('the local SDK refused the arguments', 'MCP_CLIENT_REFUSED');
      }],
    ])('whatever the spelling: %s', async (_how, invoke) => {
      const stores = open();
      const tool = testTool({ name: 'deploy', risk: 'critical', input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false } });
      const h0 = setup(stores, { tools: [{ manifest: tool.manifest, handler: { invoke: invoke() } }] });
      const approval = await h0.approve();
      const denial = denialOf(await h0.call(approval.id));
      expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', data: { reached: false, approvalReleased: true } });
      expect(denial.message).toContain(RELEASED(approval.id));
      expect(await h0.statusOf(approval.id)).toBe('approved');
    });

    it('a held approval is not reusable while its first call is in flight, and is reusable once it was given back', async () => {
      const stores = open();
      const server = new RestartingServer();
      server.refusalDelayMs = 100;
      const { approve, statusOf, call } = setup(stores, { tools: [server.tool()] });
      const approval = await approve();
      const first = call(approval.id);
      await new Promise((resolve) => setTimeout(resolve, 20));
      // While the first call holds it, the approval is consumed: a second call cannot use it too.
      expect(await statusOf(approval.id)).toBe('consumed');
      expect(denialOf(await call(approval.id))).toMatchObject({ code: 'APPROVAL_REQUIRED' });
      expect(denialOf(await first)).toMatchObject({ data: { approvalReleased: true } });
      server.refusalDelayMs = 0;
      server.up = true;
      expect((await call(approval.id)).ok).toBe(true);
      expect(server.ran).toBe(1);
    });

    it('20 parallel calls on one approval against a restarting source run nothing and leave it usable once', async () => {
      const stores = open();
      const server = new RestartingServer();
      const { approve, statusOf, call } = setup(stores, { tools: [server.tool()] });
      const approval = await approve();
      const results = await Promise.all(Array.from({ length: 20 }, () => call(approval.id)));
      expect(results.every((r) => !r.ok)).toBe(true);
      expect(server.ran).toBe(0);
      expect(await statusOf(approval.id)).toBe('approved');
      server.up = true;
      const after = await Promise.all(Array.from({ length: 5 }, () => call(approval.id)));
      expect(after.filter((r) => r.ok)).toHaveLength(1);
      expect(server.ran).toBe(1);
    });

    it('keeps the budget charge of a call that did not reach its tool (ADR 0062: no refund)', async () => {
      const stores = open();
      const server = new RestartingServer();
      const { approve, remaining, call } = setup(stores, { tools: [server.tool()] });
      const approval = await approve();
      const before = await remaining();
      denialOf(await call(approval.id));
      expect(await remaining()).toBe(before - 1);
    });

    it('says an approval that expired during the call was not used but cannot be used again', async () => {
      const stores = open();
      const tool = testTool(
        { name: 'deploy', risk: 'high', input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false } },
        () => {
          throw new ToolNotReachedError('server stopped', 'MCP_SERVER_STOPPED');
        },
      );
      const s = setup(stores, { tools: [tool] });
      const approval = await s.approve();
      // The clock passes the approval's expiry between the consume and the handler's refusal.
      const consume = stores.approvals.consume.bind(stores.approvals);
      stores.approvals.consume = async (...args) => {
        const outcome = await consume(...args);
        s.h.clock.time = approval.expiresAt + 1;
        return outcome;
      };
      const denial = denialOf(await s.call(approval.id));
      expect(denial.message).toContain(`Approval '${approval.id}' was not used, but it has expired; ask for a new one.`);
      expect(denialOf(await s.call(approval.id))).toMatchObject({ gate: 'approval' });
      expect(tool.calls).toHaveLength(1);
    });
  });

  describe('calls stopped inside the pipeline before the handler starts', () => {
    it('a tenant workspace that cannot be prepared', async () => {
      const stores = open();
      const server = new RestartingServer();
      server.up = true;
      // A file where the workspace root should be: the real adapter cannot create the tenant's directory.
      const blocked = join(tempDir('toolgate-ws-'), 'not-a-directory');
      writeFileSync(blocked, 'x');
      const { h, approve, statusOf, call } = setup(stores, { tools: [server.tool()], deps: { workspaces: new FsTenantWorkspaces(blocked) } });
      const approval = await approve();
      const denial = denialOf(await call(approval.id));
      expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', data: { reached: false, approvalReleased: true } });
      expect(denial.message).toContain('The tenant workspace could not be prepared');
      expect(denial.message).toContain(RELEASED(approval.id));
      expect(server.ran).toBe(0);
      expect(await statusOf(approval.id)).toBe('approved');
      expect(h.audit.records.at(-1)).toMatchObject({ event: 'denied', code: 'EXECUTION_FAILED', detail: expect.stringContaining(RELEASED(approval.id)) });
    });

    it.each([
      ['before the call is sent', 'before'],
      ['while the authorized record is written', 'audit'],
      ['while the approval is consumed', 'consume'],
    ] as const)('a caller that went away %s', async (_when, when) => {
      const stores = open();
      const server = new RestartingServer();
      server.up = true;
      const caller = new AbortController();
      const consume = stores.approvals.consume.bind(stores.approvals);
      if (when === 'consume') {
        stores.approvals.consume = async (...args) => {
          const outcome = await consume(...args);
          caller.abort();
          return outcome;
        };
      }
      const { h, approve, statusOf, call } = setup(stores, { tools: [server.tool()] });
      if (when === 'audit') h.audit.afterAppend = (record) => void (record.event === 'authorized' && caller.abort());
      const approval = await approve();
      if (when === 'before') caller.abort();
      const denial = denialOf(await call(approval.id, 'deploy', { target: 'prod' }, caller.signal));
      expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', data: { reason: 'CANCELLED' } });
      expect(server.ran).toBe(0);
      expect(await statusOf(approval.id)).toBe('approved');
      if (when !== 'before') {
        expect(denial.message).toContain('before the tool started');
        const detail = h.audit.records.at(-1)?.detail;
        expect(detail).toMatch(/^cancelled by the caller; /);
        expect(detail).toContain(RELEASED(approval.id));
      }
    });

    it.each([
      ['resolves aborted without invoking the handler', async (): Promise<ExecutionOutcome> => ({ status: 'aborted' })],
      ['rejects (a bad deadline)', async (): Promise<ExecutionOutcome> => Promise.reject(new RangeError('timeoutMs must be a positive number'))],
      ['reports a deadline it never started', async (): Promise<ExecutionOutcome> => ({ status: 'deadline', timeoutMs: 5000 })],
      ['reports a ToolError it made up', async (): Promise<ExecutionOutcome> => ({ status: 'threw', error: new ToolError('no slot free', 'BUSY') })],
    ])('an executor that refuses to start the handler: %s', async (_how, execute) => {
      const stores = open();
      const server = new RestartingServer();
      server.up = true;
      const refusing: ToolExecutor = { tier: 'inprocess', isolation: { summary: 'refuses every call' }, check: async () => undefined, execute };
      const { approve, statusOf, call } = setup(stores, { tools: [server.tool()], executors: [refusing] });
      const approval = await approve();
      const denial = denialOf(await call(approval.id));
      expect(denial.data).toMatchObject({ approvalId: approval.id, approvalReleased: true });
      expect(server.ran).toBe(0);
      expect(await statusOf(approval.id)).toBe('approved');
    });

    it('an executor that invokes the handler only after it answered never reaches the handler', async () => {
      const stores = open();
      const server = new RestartingServer();
      server.up = true;
      let late: Promise<unknown> | undefined;
      const settlesFirst: ToolExecutor = {
        tier: 'inprocess',
        isolation: { summary: 'answers, then calls' },
        check: async () => undefined,
        execute: async (handler, args, ctx) => {
          late = new Promise((resolve) => setTimeout(resolve, 10)).then(() => handler.invoke(args, ctx)).catch((error: unknown) => error);
          return { status: 'aborted' };
        },
      };
      const { approve, statusOf, call } = setup(stores, { tools: [server.tool()], executors: [settlesFirst] });
      const approval = await approve();
      denialOf(await call(approval.id));
      expect(await statusOf(approval.id)).toBe('approved');
      expect(await late).toBeInstanceOf(ToolAbortedError);
      expect(server.ran).toBe(0);
    });

    it('a budget store that fails at the charge after the consume', async () => {
      const stores = open();
      const server = new RestartingServer();
      server.up = true;
      stores.budgets.charge = async () => Promise.reject(new Error('disk I/O error at /var/lib/toolgate/state.db'));
      const { h, approve, statusOf, call } = setup(stores, { tools: [server.tool()] });
      const approval = await approve();
      const denial = denialOf(await call(approval.id));
      expect(denial).toMatchObject({ gate: 'budget', code: 'STATE_UNAVAILABLE', data: { approvalId: approval.id, approvalReleased: true } });
      expect(denial.message).toContain(`The call did not run. ${RELEASED(approval.id)}`);
      expect(denial.message).not.toContain('/var/lib');
      expect(server.ran).toBe(0);
      expect(await statusOf(approval.id)).toBe('approved');
      expect(h.audit.records.at(-1)).toMatchObject({ event: 'denied', code: 'STATE_UNAVAILABLE', detail: denial.message });
    });

    it('a tier with no executor consumes nothing at all', async () => {
      const stores = open();
      const server = new RestartingServer();
      const { h, approve, statusOf, call } = setup(stores, { tools: [server.tool('unisolated')], executors: [new InProcessExecutor()] });
      const approval = await approve();
      expect(denialOf(await call(approval.id))).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED' });
      expect(await statusOf(approval.id)).toBe('approved');
      expect(h.audit.kinds()).not.toContain('authorized');
    });
  });

  describe('a release that fails is said honestly', () => {
    it.each([
      ['refuses', async (): Promise<boolean> => false, 'the approval store refused'],
      ['throws', async (): Promise<boolean> => Promise.reject(new Error('connection reset')), 'the approval store did not answer'],
    ] as const)('a store that %s: the approval counts as used, in the answer and the audit', async (_how, release, why) => {
      const stores = open();
      stores.approvals.release = release;
      const server = new RestartingServer();
      const { h, approve, statusOf, call } = setup(stores, { tools: [server.tool()] });
      const approval = await approve();
      const denial = denialOf(await call(approval.id));
      const sentence = `Approval '${approval.id}' could not be given back (${why}), so it counts as used; ask for a new one.`;
      expect(denial.message).toContain(sentence);
      expect(denial.message).not.toContain('connection reset');
      expect(denial.data).toMatchObject({ approvalId: approval.id, approvalReleased: false });
      expect(h.audit.records.at(-1)?.detail).toContain(sentence);
      expect(await statusOf(approval.id)).toBe('consumed');
    });
  });
});

describe.each(STORES)('calls handed to their tool keep their approval used (%s stores)', (_kind, open) => {
  // Only the ToolNotReachedError class says nothing was handed over; a look-alike is a failure of a call that ran.
  describe('forged "not reached" claims', () => {
    it.each([
      ['a ToolError with the reason NOT_REACHED', () => new ToolError('not reached', 'NOT_REACHED')],
      ['a ToolError with the restarting reason', () => new ToolError("MCP server 'x' is restarting", 'MCP_SERVER_RESTARTING')],
      ['a ToolError whose message claims it', () => new ToolError("The call did not reach the tool. Approval 'a' was not used and still allows one call.")],
      ['a plain object shaped like one', () => ({ name: 'ToolNotReached', reason: 'NOT_REACHED', message: 'not reached' })],
      ['an Error named ToolNotReached', () => Object.assign(new Error('not reached'), { name: 'ToolNotReached' })],
    ])('%s', async (_how, error) => {
      const stores = open();
      const tool = testTool(
        { name: 'deploy', risk: 'high', input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false } },
        () => Promise.reject(error()),
      );
      const { approve, statusOf, call } = setup(stores, { tools: [tool] });
      const approval = await approve();
      const denial = denialOf(await call(approval.id));
      expect(denial.code).toBe('EXECUTION_FAILED');
      expect(denial.data?.['approvalReleased']).toBeUndefined();
      expect(await statusOf(approval.id)).toBe('consumed');
    });
  });

  it.each([
    ['it timed out', 'deadline'],
    ['its caller went away after it started', 'cancel'],
    ['it threw ToolNotReachedError only after its deadline', 'late'],
    ['it failed', 'fail'],
    ['it ran', 'ran'],
  ] as const)('a call whose handler started keeps its approval used when %s', async (_when, how) => {
    const stores = open();
    const caller = new AbortController();
    const tool = testTool(
      { name: 'deploy', risk: 'high', timeoutMs: 60, input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false } },
      async () => {
        if (how === 'ran') return 'done';
        if (how === 'fail') throw new ToolError('disk full');
        if (how === 'cancel') setTimeout(() => caller.abort(), 10);
        await new Promise((resolve) => setTimeout(resolve, 200));
        throw new ToolNotReachedError('too late to say so');
      },
    );
    const { approve, statusOf, call } = setup(stores, { tools: [tool] });
    const approval = await approve();
    const result = await call(approval.id, 'deploy', { target: 'prod' }, caller.signal);
    if (how === 'ran') expect(result.ok).toBe(true);
    else expect(denialOf(result).data?.['approvalReleased']).toBeUndefined();
    expect(await statusOf(approval.id)).toBe('consumed');
  });
});
